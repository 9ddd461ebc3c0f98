/**
 * Every subscriber of every topic of the engine, in one place: what runs, in the publisher's store transaction,
 * when something happens in a domain that others wait on.
 *
 * | Topic (declared by) | Published when | Subscribers, in order |
 * |---|---|---|
 * | TransactionEnded (money/Transactions.ts) | a transaction reaches its first terminal status | orders: execute the autoExecute orders its credit now covers, fail those its failed deposit or signing leaves unfunded (FundedOrders.ts); signing: free its wallet's seat or its place in the queue (TransferSigning.ts) |
 * | SignaturesRequested (money/Transactions.ts) | a transfer out of a non-custodial wallet (payout, conversion, deposit return) is processing | signing: start its roster's signing, or go on where it stands (TransferSigning.ts) |
 * | SignerLeftPool (signing/Roster.ts) | a signer is removed from its roster's signing pool | signing: fail the transfers the change breaks, roster_changed (TransferSigning.ts) |
 * | VirtualAccountApproved (onboarding/ApprovalEffects.ts) | a virtual_account application is approved | money: open its account, pending until it activates on the clock (VirtualAccounts.ts) |
 * | EventWritten (kernel/Outbox.ts) | an event is written to the outbox | webhooks: fan it out, a delivery per subscribed endpoint (FanOut.ts) |
 *
 * Why here, and why topics: a publisher that imported its subscribers would make dependencies run both ways
 * (money/Transactions.ts would import Orders.ts and TransferSigning.ts, both of which import it back). So each
 * publisher declares its topic beside the row it owns, typed by what it carries, and knows no subscriber; this
 * module, on top of the core beside Engine.ts, is the only one that imports both sides, so a reader finds every
 * subscriber of every topic in this table and the list below, and the import graph shows who reacts to what. The
 * engine (Engine.ts) provides this layer; an engine built without it has no subscribers declared, and publishing
 * dies rather than skip what should have run (kernel/Topics.ts).
 */
import { Layer } from "effect"
import * as ApprovalEffects from "./onboarding/ApprovalEffects.ts"
import * as FanOut from "./webhooks/FanOut.ts"
import * as Outbox from "./kernel/Outbox.ts"
import * as Roster from "./signing/Roster.ts"
import type * as Topics from "./kernel/Topics.ts"
import * as Transactions from "./money/Transactions.ts"
import * as TransferSigning from "./signing/TransferSigning.ts"
import * as VirtualAccounts from "./money/VirtualAccounts.ts"
import { onTransactionEnded } from "./money/FundedOrders.ts"

const subscribe = <A>(t: Topics.Topic<A>, subscribers: ReadonlyArray<Topics.Subscriber<A>>) => Layer.succeed(t, subscribers)

export const layer = Layer.mergeAll(
  subscribe<Transactions.StoredTransaction>(Transactions.TransactionEnded, [onTransactionEnded, TransferSigning.onTransferEnded]),
  subscribe<Transactions.SignatureRequest>(Transactions.SignaturesRequested, [TransferSigning.startSigning]),
  subscribe<Roster.StoredSigner>(Roster.SignerLeftPool, [TransferSigning.onSignerLeftPool]),
  subscribe<ApprovalEffects.ApprovedAccount>(ApprovalEffects.VirtualAccountApproved, [VirtualAccounts.onApproved]),
  subscribe<Outbox.OutboxEvent>(Outbox.EventWritten, [FanOut.fanOut])
)
