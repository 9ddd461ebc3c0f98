/**
 * Every domain's descriptor (kernel/Domain.ts), in one list: the engine composes it into the registry that resets,
 * snapshots, the scheduler and the inspector read (Engine.ts). A module that declares a table or a kind of timer
 * says so in its own `domain`; the list only names the module.
 *
 * Lowest layer first, as the core's folders are (docs/architecture.md). The order is the order a reset removes and a
 * snapshot copies the tables in, which changes nothing they do (every selection is read before any row goes).
 */
import type { TimerKind } from "@fos/contract"
import * as Domain from "./kernel/Domain.ts"
import * as Clocks from "./kernel/Clocks.ts"
import * as Idempotency from "./kernel/Idempotency.ts"
import * as Liveness from "./kernel/Liveness.ts"
import * as Operator from "./tenancy/Operator.ts"
import * as Tenancy from "./tenancy/Tenancy.ts"
import * as AttemptRequests from "./webhooks/AttemptRequests.ts"
import * as Deliveries from "./webhooks/Deliveries.ts"
import * as Dispatch from "./webhooks/Dispatch.ts"
import * as Endpoints from "./webhooks/Endpoints.ts"
import * as Listeners from "./webhooks/Listeners.ts"
import * as Faults from "./simulate/Faults.ts"
import * as Outcomes from "./simulate/Outcomes.ts"
import * as Applications from "./onboarding/Applications.ts"
import * as ApplicationTimers from "./onboarding/ApplicationTimers.ts"
import * as Cancellation from "./onboarding/Cancellation.ts"
import * as Customers from "./onboarding/Customers.ts"
import * as Documents from "./onboarding/Documents.ts"
import * as DepositReturns from "./money/DepositReturns.ts"
import * as Deposits from "./money/Deposits.ts"
import * as Ledger from "./money/Ledger.ts"
import * as OrderTimers from "./money/OrderTimers.ts"
import * as Orders from "./money/Orders.ts"
import * as Payouts from "./money/Payouts.ts"
import * as Pricing from "./money/Pricing.ts"
import * as Quotes from "./money/Quotes.ts"
import * as Recipients from "./money/Recipients.ts"
import * as Rfis from "./money/Rfis.ts"
import * as Transactions from "./money/Transactions.ts"
import * as VirtualAccounts from "./money/VirtualAccounts.ts"
import * as Wallets from "./money/Wallets.ts"
import * as Ceremonies from "./signing/Ceremonies.ts"
import * as Claims from "./signing/Claims.ts"
import * as Roster from "./signing/Roster.ts"
import * as Sessions from "./signing/Sessions.ts"
import * as TransferSigning from "./signing/TransferSigning.ts"
import * as Snapshots from "./Snapshots.ts"

export const all = [
  Domain.kernel,
  Idempotency.domain,
  Clocks.domain,
  Liveness.domain,
  Tenancy.domain,
  Operator.domain,
  Endpoints.domain,
  Deliveries.domain,
  AttemptRequests.domain,
  Listeners.domain,
  Dispatch.domain,
  Faults.domain,
  Outcomes.domain,
  Customers.domain,
  Applications.domain,
  ApplicationTimers.domain,
  Cancellation.domain,
  Documents.domain,
  Transactions.domain,
  Ledger.domain,
  Wallets.domain,
  VirtualAccounts.domain,
  Deposits.domain,
  DepositReturns.domain,
  Payouts.domain,
  Pricing.domain,
  Quotes.domain,
  Orders.domain,
  OrderTimers.domain,
  Recipients.domain,
  Rfis.domain,
  Roster.domain,
  Claims.domain,
  Ceremonies.domain,
  TransferSigning.domain,
  Sessions.domain,
  Snapshots.domain
] as const

/**
 * Every kind of timer the contract names (the OpenAPI document's TimerKind) has a handler: a kind without one is a
 * compile error here, naming it.
 */
type Unhandled = Exclude<TimerKind, Domain.HandledKinds<typeof all[number]>>
export const everyKindHandled: [Unhandled] extends [never] ? true : { readonly unhandled: Unhandled } = true
