/**
 * Virtual accounts: fiat accounts in a customer's name. An approved virtual_account application creates one in
 * `pending`; it activates asynchronously on the clock and emits virtual_account.activated with its deposit
 * instructions, one block per rail family, each in its own currency.
 *
 * Its states are VirtualAccountMachine.ts's: every status change goes through `VirtualAccountMachine.transition`.
 *
 * Account numbers are derived from the account id, so the same seed and clock give the same numbers, and they are
 * well-formed (IBAN check digits, ABA routing prefix and checksum) so an integration's validators accept them.
 */
import { Clock, Effect, Schema } from "effect"
import * as Auth from "../tenancy/Auth.ts"
import type * as ApprovalEffects from "../onboarding/ApprovalEffects.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Ledger from "./Ledger.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as ReviewSettings from "../onboarding/ReviewSettings.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Timers from "../kernel/Timers.ts"
import * as VirtualAccountMachine from "./VirtualAccountMachine.ts"
import * as Wire from "../kernel/Wire.ts"

import {
  type AssetCode,
  DepositBlock as DepositBlockSchema,
  type Environment,
  toIso,
  VirtualAccount as VirtualAccountSchema,
  type VirtualAccount as VirtualAccountWire,
  type VirtualAccountId
} from "@fos/contract"

import { mintAbaRoutingNumber } from "./AbaRoutingNumbers.ts"

/** A deposit block as virtual_account.activated carries it. */
type DepositBlock = typeof DepositBlockSchema.Type

export interface VirtualAccount {
  readonly id: VirtualAccountId
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: string
  readonly applicationId: string
  readonly asset: { readonly code: AssetCode }
  readonly status: VirtualAccountMachine.VirtualAccountStatus
  readonly depositInstructions: ReadonlyArray<DepositBlock>
  readonly activatedAt: string | undefined
  readonly createdAt: string
  readonly updatedAt: string
}

const scope = (v: VirtualAccount) => Tenancy.scopeOf(v.organizationId, v.environment)

export const VirtualAccounts = Store.table<VirtualAccount>({
  name: "virtual_accounts",
  key: (v) => v.id,
  orders: { byCustomer: { partition: (v) => `${scope(v)}/${v.customerId}`, sort: (v) => v.createdAt } }
})

/** A pending account's activation, `virtualAccountActivationMs` after its application's approval. */
export const activateTimer = Timers.kind("virtual_account.activate", Schema.Struct({ virtualAccountId: Schema.String }), "virtualAccountId")

const bankName = "fos Sandbox Bank"

/** `n` decimal digits drawn from the account id (deterministic). */
const digitsOf = (seed: string, n: number): string => {
  let out = ""
  let round = 0
  while (out.length < n) out += BigInt("0x" + Auth.sha256Hex(`${seed}/${round++}`)).toString().slice(1)
  return out.slice(0, n)
}

/**
 * An ABA routing number: a Federal Reserve prefix, six digits and the check digit (AbaRoutingNumbers.ts), so that
 * the number fos issues passes fos's own validator, a whitelist recipient's included.
 */
const routingNumber = (seed: string): string => mintAbaRoutingNumber(digitsOf(`${seed}/aba`, 8))

/** A German IBAN: DE, ISO 13616 mod-97 check digits, an 8-digit bank code and a 10-digit account number. */
const germanIban = (seed: string): string => {
  const bban = "10010010" + digitsOf(`${seed}/iban`, 10)
  // Letters become numbers (D=13, E=14); the check digits are 98 minus the remainder of BBAN + "DE00".
  const check = 98n - (BigInt(bban + "131400") % 97n)
  return `DE${check.toString().padStart(2, "0")}${bban}`
}

/** The deposit blocks of an account collecting `currency`: its domestic rail, and SWIFT, each in its own currency. */
export const depositBlocks = (id: string, currency: AssetCode, holder: string): ReadonlyArray<DepositBlock> => {
  const head = { bankName, accountHolderName: holder }
  const swift = (bic: string): DepositBlock => ({ railFamily: "swift", currency, ...head, accountNumber: digitsOf(`${id}/swift`, 12), bic })
  switch (currency) {
    case "USD":
      return [
        { railFamily: "us_domestic", currency: "USD", ...head, accountNumber: digitsOf(`${id}/ach`, 12), routingNumber: routingNumber(id) },
        swift("FOSBUS33")
      ]
    case "EUR":
      return [{ railFamily: "sepa", currency: "EUR", ...head, iban: germanIban(id), bic: "FOSBDEFFXXX" }, swift("FOSBDEFF")]
    case "GBP":
      return [
        { railFamily: "uk_domestic", currency: "GBP", ...head, accountNumber: digitsOf(`${id}/fps`, 8), sortCode: "04" + digitsOf(`${id}/sort`, 4) },
        swift("FOSBGB2L")
      ]
    default:
      return [swift("FOSBUS33")]
  }
}

/** Opens the account of an approved virtual_account application (ApprovalEffects' topic, Subscriptions.ts). */
export const onApproved = (approved: ApprovalEffects.ApprovedAccount): Effect.Effect<void, never, Store.Store> =>
  Effect.asVoid(create(approved.application, approved.now))

/** Creates the account of an approved virtual_account application; it activates on the clock. */
export const create = (
  application: { readonly id: string; readonly organizationId: string; readonly environment: Environment; readonly customerId: string | undefined; readonly asset: { readonly code: AssetCode } | undefined },
  now: string
): Effect.Effect<VirtualAccount, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const account: VirtualAccount = {
      id: yield* IdGenerator.newId("vac"),
      organizationId: application.organizationId,
      environment: application.environment,
      customerId: application.customerId!,
      applicationId: application.id,
      asset: { code: application.asset!.code },
      status: VirtualAccountMachine.initialStatus,
      depositInstructions: [],
      activatedAt: undefined,
      createdAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(store.insert(VirtualAccounts, account))
    const delay = (yield* ReviewSettings.ReviewSettings).virtualAccountActivationMs
    yield* Timers.schedule(activateTimer, (yield* Clock.currentTimeMillis) + delay, { virtualAccountId: account.id }, scope(account))
    return account
  })

const activate = (payload: { readonly virtualAccountId: string }) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const account = yield* store.getForUpdate(VirtualAccounts, payload.virtualAccountId)
    if (account === undefined) return
    // Activated already (a timer fired again): nothing to do.
    const outcome = VirtualAccountMachine.transition(account.status, { type: "activate" })
    if (!("next" in outcome)) return
    const customer = yield* store.get(Customers.Customers, account.customerId)
    const now = toIso(yield* Clock.currentTimeMillis)
    const active: VirtualAccount = {
      ...account,
      status: outcome.next,
      depositInstructions: depositBlocks(account.id, account.asset.code, customer?.name || "Account holder"),
      activatedAt: now,
      updatedAt: now
    }
    yield* Effect.orDie(store.update(VirtualAccounts, active))
    for (const type of outcome.events) {
      yield* Outbox.emitEvent({
        type,
        organizationId: account.organizationId,
        environment: account.environment,
        data: {
          virtualAccountId: account.id,
          customerId: account.customerId,
          applicationId: account.applicationId,
          asset: active.asset,
          depositInstructions: active.depositInstructions,
          occurredAt: now
        }
      })
    }
  })

/** A customer's virtual accounts, listed under it, and their activation. */
export const domain = Domain.make({
  name: "money/VirtualAccounts",
  tables: [{
    ...Domain.underParents(VirtualAccounts, "byCustomer", { table: Customers.Customers, order: "createdAt", prefix: "scope/" }),
    counted: "virtualAccounts",
    readsAs: (v: VirtualAccount) => ({ schema: VirtualAccountSchema, value: wireOf(v, Ledger.emptyBalance({ code: v.asset.code })) })
  }],
  timers: [Timers.handle(activateTimer, activate, (id) => `activates virtual account ${id}`)]
})

/** The ledger holder of a virtual account's money. */
export const holder = (v: VirtualAccount): Ledger.Holder => ({ scope: scope(v), type: "virtual_account", id: v.id })

/** A virtual account on the wire, with its balance in the currency it collects (read from the ledger). */
export const toWire = (v: VirtualAccount): Effect.Effect<VirtualAccountWire, never, Store.Store> =>
  Effect.map(Ledger.balanceIn(holder(v), { code: v.asset.code }), (balance) => wireOf(v, balance))

/** A virtual account on the wire with the balance given (the ledger's, read by `toWire`). */
const wireOf = (v: VirtualAccount, balance: Ledger.Balance): VirtualAccountWire =>
  Wire.toWire({
    id: v.id,
    customerId: v.customerId,
    applicationId: v.applicationId,
    asset: v.asset,
    status: v.status,
    depositInstructions: v.depositInstructions,
    balances: [Ledger.balanceToWire(balance)],
    activatedAt: v.activatedAt,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt
  }) as VirtualAccountWire

export const get = (caller: Auth.Caller, id: VirtualAccountId): Effect.Effect<VirtualAccount, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const account = yield* (yield* Store.Store).get(VirtualAccounts, id)
    if (account === undefined || scope(account) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* Problem.apiError("VIRTUAL_ACCOUNT_NOT_FOUND", "No virtual account with this id exists in this organization and environment.")
    }
    return account
  })

export const list = (caller: Auth.Caller, customerId: string, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<VirtualAccountWire>, Problem.ApiError, Store.Store> =>
  Effect.flatMap(
    Paging.listPage(VirtualAccounts, {
      order: "byCustomer",
      partition: `${Tenancy.scopeOf(caller.organization.id, caller.environment)}/${customerId}`,
      query,
      toWire: (v) => v
    }),
    (page) => Effect.map(Effect.forEach(page.data, toWire), (data) => ({ ...page, data }))
  )
