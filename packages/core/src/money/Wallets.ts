/**
 * Wallets: a customer's account on one chain, with a deposit address derived from the wallet's id
 * (Addresses.ts) and balances read from the ledger.
 *
 * - Creating one needs a customer that is onboarded (an id still reserved by an open onboarding application is 422
 *   CUSTOMER_NOT_ONBOARDED) and an approved crypto_wallet application of that customer for the chain. Without one
 *   the answer is 422 UNPROCESSABLE_ENTITY (docs/money.md says why that code). It emits wallet.created.
 * - Rotation retires an active wallet and creates its successor on the same chain, which the retired one names in
 *   `replacedByWalletId`. The spec's rule: only an active wallet with no balance above the dust floor and no
 *   unsupported-coin return pending can rotate. A retired (or frozen) wallet is WALLET_NOT_ROTATABLE; an
 *   unsupported coin's return still open from it (signing/TransferSigning.ts) is WALLET_ROTATION_BLOCKED_RETURN; a
 *   balance above the floor (or money reserved or on its way in) is WALLET_ROTATION_BLOCKED_BALANCE.
 * - A wallet's status changes only through `Wallets.move`, through its table (WalletMachine.ts): active -> frozen (the
 *   wallet provider reports its signing configuration blocks movement, signing/WalletFreeze.ts), active -> retired
 *   (rotation). Frozen and retired are final. A new wallet is born active (`Wallets.open`).
 * - A rotation lasts the world model's `rotationForwardingMs` (`rotationEndsAt` on both wallets): what senders still
 *   send to the retired address meanwhile is credited to the successor (Deposits.ts), and rotating either wallet
 *   again is WALLET_ROTATION_IN_PROGRESS. After it, the retired address takes nothing (WALLET_NOT_ACTIVE).
 */
import {
  type Chain,
  type CustomerId,
  type Environment,
  parseAmount,
  parseIso,
  toIso,
  Wallet as WalletSchema,
  type Wallet as WalletWire,
  type WalletCreate,
  type WalletId,
  type WalletCustody,
  withArticle
} from "@fos/contract"
import { Clock, Effect } from "effect"
import * as Addresses from "./Addresses.ts"
import * as Applications from "../onboarding/Applications.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as Customers from "../onboarding/Customers.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Ledger from "./Ledger.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Paging from "../kernel/Paging.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as Tenancy from "../tenancy/Tenancy.ts"
import * as Transactions from "./Transactions.ts"
import * as WalletMachine from "./WalletMachine.ts"
import * as Wire from "../kernel/Wire.ts"
import * as WorldModel from "./WorldModel.ts"

/**
 * A wallet's row: the wire's members it keeps as they are (the contract's `Wallet`; custodial wallets are the
 * service's to sign for, non-custodial ones, signing/Claims.ts, need the roster's quorum), its ids branded, and its own.
 */
export interface StoredWallet
  extends Wire.Stored<WalletWire, "chain" | "custody" | "status" | "address" | "clientReferenceId" | "createdAt" | "updatedAt">
{
  readonly id: WalletId
  readonly organizationId: string
  readonly environment: Environment
  readonly customerId: CustomerId
  readonly replacedByWalletId: WalletId | undefined
  /**
   * Set on the service-managed funding address of a deposit-funded order (Orders.ts): it takes deposits at its
   * address, but it is not the customer's wallet, so no read or list shows it and no wallet.created announces it.
   */
  readonly fundingOrderId?: string | undefined
  /**
   * The end of the rotation this wallet took part in, as the retired wallet or as its successor (ISO): until then
   * the retired address forwards to the successor and neither rotates. Not on the wire; the refusal's detail says it.
   */
  readonly rotationEndsAt?: string | undefined
}

const scope = (w: StoredWallet) => Tenancy.scopeOf(w.organizationId, w.environment)

/** A wallet's value of the `address` unique key: its scope, its chain and its deposit address. */
const addressKey = (walletScope: string, chain: Chain, address: string): string => `${walletScope}/${chain}:${address}`

export const Wallets = Store.table<StoredWallet>({
  name: "wallets",
  key: (w) => w.id,
  unique: {
    // Deposits sent to an address find their wallet, in the sandbox (or live environment) they are sent to: a fork
    // of a sandbox (Forks.ts) keeps its wallets' addresses, so an address is unique within a scope, not a store.
    address: (w) => addressKey(scope(w), w.chain, w.address),
    clientReferenceId: (w) => (w.clientReferenceId === undefined ? undefined : `${scope(w)}/${w.clientReferenceId}`)
  },
  orders: {
    byCustomer: { partition: (w) => (w.fundingOrderId === undefined ? `${scope(w)}/${w.customerId}` : undefined), sort: (w) => w.createdAt },
    // The wallets that fund an order's deposit, listed under no customer: how a reset and a snapshot find them.
    funding: { partition: (w) => (w.fundingOrderId === undefined ? undefined : scope(w)), sort: (w) => w.createdAt, counted: false }
  }
})

/** A customer's wallets, listed under it, and the funding addresses of deposit-funded orders. */
export const domain = Domain.make({
  name: "money/Wallets",
  tables: [
    { ...Domain.underParents(Wallets, "byCustomer", { table: Customers.Customers, order: "createdAt", prefix: "scope/" }), counted: "wallets", readsAs: (w: StoredWallet) => ({ schema: WalletSchema, value: wireOf(w, []) }) },
    // A deposit-funded order's funding address is a wallet listed under no customer.
    { ...Domain.inScope(Wallets, "funding"), counted: "wallets", readsAs: (w: StoredWallet) => ({ schema: WalletSchema, value: wireOf(w, []) }) }
  ]
})

/** Non-custodial wallets can sign on these chains (spec: EVM chains Ethereum, Base, Polygon; Solana; Tron). */
export const nonCustodialChains: ReadonlyArray<Chain> = ["ethereum", "base", "polygon", "solana", "tron"]

/** The ledger holder of a wallet's money. */
export const holder = (w: StoredWallet): Ledger.Holder => ({ scope: scope(w), type: "wallet", id: w.id })

/** A wallet on the wire, with its balances from the ledger. */
export const toWire = (w: StoredWallet): Effect.Effect<WalletWire, never, Store.Store> =>
  Effect.map(Ledger.balancesOf(holder(w)), (balances) => wireOf(w, balances))

/** A wallet on the wire with the balances given (the ledger's, read by `toWire`). */
const wireOf = (w: StoredWallet, balances: ReadonlyArray<Ledger.Balance>): WalletWire =>
  Wire.toWire({
    id: w.id,
    customerId: w.customerId,
    chain: w.chain,
    custody: w.custody,
    status: w.status,
    address: w.address,
    balances: balances.map(Ledger.balanceToWire),
    clientReferenceId: w.clientReferenceId,
    replacedByWalletId: w.replacedByWalletId,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt
  }) as WalletWire

const notFound = () => Problem.apiError("WALLET_NOT_FOUND", "No wallet with this id exists in this organization and environment.")

export const get = (caller: Auth.Caller, id: WalletId, forUpdate = false): Effect.Effect<StoredWallet, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const wallet = yield* (forUpdate ? store.getForUpdate(Wallets, id) : store.get(Wallets, id))
    if (wallet === undefined || wallet.fundingOrderId !== undefined || scope(wallet) !== Tenancy.scopeOf(caller.organization.id, caller.environment)) {
      return yield* notFound()
    }
    return wallet
  })

/**
 * Applies `move` to the wallet `w` (locked) through its table (WalletMachine.ts) and stores it; a move its status
 * does not allow is a bug of the caller, which checks first to answer with its own code.
 */
export const move = (w: StoredWallet, move: WalletMachine.Move): Effect.Effect<StoredWallet, never, Store.Store> =>
  Effect.gen(function*() {
    const outcome = WalletMachine.transition(w.status, move)
    if ("refused" in outcome) return yield* Effect.die(new Error(`${withArticle(w.status)} wallet cannot ${move.type}`))
    const status = outcome.next
    const updatedAt = toIso(yield* Clock.currentTimeMillis)
    const moved: StoredWallet = move.type === "retire"
      ? { ...w, status, replacedByWalletId: move.replacedByWalletId, rotationEndsAt: move.rotationEndsAt, updatedAt }
      : { ...w, status, updatedAt }
    yield* Effect.orDie((yield* Store.Store).update(Wallets, moved))
    return moved
  })

/** Whether the rotation `w` took part in (as the retired wallet or its successor) still lasts at `nowMs`. */
export const rotationUnderway = (w: StoredWallet, nowMs: number): boolean =>
  w.rotationEndsAt !== undefined && parseIso(w.rotationEndsAt)! > nowMs

/** Why a wallet that is not active cannot send: retired (its successor sends) or frozen (nothing sends). */
export const notActiveDetail = (w: StoredWallet, role = "wallet"): string =>
  w.status === "frozen"
    ? `The ${role} is frozen: its signing configuration blocks movement (crypto_wallet_misconfigured); nothing can be sent from it.`
    : `The ${role} is retired; use its successor (replacedByWalletId).`

/**
 * Whether a return of an unsupported coin from the wallet (a deposit_return out of it, DepositReturns.ts) is
 * still open: the spec's rotation rule ("no unsupported-coin return pending").
 */
const returnPending = (caller: Auth.Caller, wallet: StoredWallet): Effect.Effect<boolean, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    for (const status of ["pending", "processing"] as const) {
      const { order, partition } = Transactions.partition(caller, { type: "deposit_return", status, customerId: wallet.customerId })
      // A customer has a few returns open at most.
      const open = yield* store.page(Transactions.Transactions, { order, partition, descending: false, backward: false, from: undefined, limit: 100 })
      if (open.some((t) => t.source.type === "wallet" && t.source.walletId === wallet.id)) return true
    }
    return false
  })

/** The caller's wallet whose deposit address on `chain` is `address`; undefined when there is none. */
export const at = (caller: Auth.Caller, chain: Chain, address: string): Effect.Effect<StoredWallet | undefined, never, Store.Store> =>
  Effect.flatMap(Store.Store, (store) =>
    store.findUnique(Wallets, "address", addressKey(Tenancy.scopeOf(caller.organization.id, caller.environment), chain, address)))

/** A customer's wallets by createdAt (desc by default), a tie by id (docs/money.md); the funding addresses are not in it. */
export const list = (caller: Auth.Caller, customerId: CustomerId, query: Paging.ListQuery): Effect.Effect<Paging.ListEnvelope<WalletWire>, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* onboardedCustomer(caller, customerId)
    const page = yield* Paging.listPage(Wallets, {
      order: "byCustomer",
      partition: `${Tenancy.scopeOf(caller.organization.id, caller.environment)}/${customerId}`,
      query,
      toWire: (w) => w
    })
    return { ...page, data: yield* Effect.forEach(page.data, toWire) }
  })

/** The customer, or CUSTOMER_NOT_ONBOARDED while its onboarding application is still open. */
export const onboardedCustomer = (caller: Auth.Caller, customerId: CustomerId) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const reserved = yield* store.get(Customers.ReservedCustomers, customerId)
    const scoped = Tenancy.scopeOf(caller.organization.id, caller.environment)
    const customer = yield* Effect.option(Customers.get(caller, customerId))
    if (customer._tag === "Some") return customer.value
    if (reserved !== undefined && reserved.scope === scoped) {
      return yield* Problem.apiError("CUSTOMER_NOT_ONBOARDED", "The customer's onboarding application has not been approved yet.")
    }
    return yield* Customers.get(caller, customerId)
  })

/** Whether the customer holds an approved crypto_wallet application for `chain`. */
export const cryptoWalletApproved = (caller: Auth.Caller, customerId: CustomerId, chain: Chain) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const applications = yield* store.page(Applications.Applications, {
      order: "byCustomer",
      partition: Applications.customerApplications(Tenancy.scopeOf(caller.organization.id, caller.environment), customerId, "crypto_wallet"),
      descending: true,
      backward: false,
      from: undefined,
      // A customer applies for a wallet on a chain a handful of times at most.
      limit: 100
    })
    return applications.some((a) => a.status === "approved" && a.asset?.chain === chain)
  })

/**
 * The refusal of a wallet on a chain the customer holds no approved crypto_wallet application for: UNPROCESSABLE_ENTITY
 * (docs/money.md says why that code), with the calls that fix it as its resolution.
 */
export const noCryptoWalletFeature = (chain: Chain) =>
  Problem.apiError("UNPROCESSABLE_ENTITY", `The customer has no approved crypto_wallet application for ${chain}.`, {
    resolution: `Apply for the feature with POST /v2/customers/{customerId}/features, an Idempotency-Key and {"type": "crypto_wallet", "asset": {"code": "USDC", "chain": "${chain}"}} (any asset on the chain); once the application is approved (in the sandbox, POST /v2/simulate/applications/{applicationId}/decision with {"outcome": "approved"}), send this request again.`
  })

/** The organization and environment a wallet is opened in. */
export interface WalletOwner {
  readonly organizationId: string
  readonly environment: Environment
}

/**
 * Opens an active wallet of `custody` on `chain` with its deposit address, and emits wallet.created; a custodial one
 * on the caller's request, a non-custodial one when its claim resolves.
 */
export const open = (
  owner: WalletOwner,
  customerId: CustomerId,
  chain: Chain,
  clientReferenceId: string | undefined,
  custody: WalletCustody = "custodial",
  /** For a rotation's successor: when the rotation ends. */
  rotationEndsAt?: string
): Effect.Effect<StoredWallet, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const wallet = yield* newWallet(owner, customerId, chain, { custody, clientReferenceId, ...(rotationEndsAt === undefined ? {} : { rotationEndsAt }) })
    const inserted = yield* Effect.exit(store.insert(Wallets, wallet))
    if (inserted._tag === "Failure") {
      return yield* Problem.apiError("DUPLICATE_CLIENT_REFERENCE_ID", "This clientReferenceId is already used by another wallet.")
    }
    yield* Outbox.emitEvent({
      type: "wallet.created",
      organizationId: wallet.organizationId,
      environment: wallet.environment,
      data: { walletId: wallet.id, customerId, chain, custody, address: wallet.address, occurredAt: wallet.createdAt }
    })
    return wallet
  })

/** A new active wallet's row: a fresh id and the deposit address derived from it. */
const newWallet = (
  owner: WalletOwner,
  customerId: CustomerId,
  chain: Chain,
  extra: Pick<StoredWallet, "custody" | "clientReferenceId"> & { readonly fundingOrderId?: string; readonly rotationEndsAt?: string }
): Effect.Effect<StoredWallet> =>
  Effect.gen(function*() {
    const id = yield* IdGenerator.newId("wlt")
    const now = toIso(yield* Clock.currentTimeMillis)
    return {
      id,
      organizationId: owner.organizationId,
      environment: owner.environment,
      customerId,
      chain,
      status: WalletMachine.initialStatus,
      address: Addresses.depositAddress(chain, id),
      replacedByWalletId: undefined,
      ...extra,
      createdAt: now,
      updatedAt: now
    }
  })

const ownerOf = (caller: Auth.Caller): WalletOwner => ({ organizationId: caller.organization.id, environment: caller.environment })

/** The funding address of a deposit-funded order: a service-managed wallet of the customer's, announced by no event. */
export const openFunding = (
  owner: WalletOwner & { readonly customerId: CustomerId },
  chain: Chain,
  orderId: string
): Effect.Effect<StoredWallet, never, Store.Store> =>
  Effect.gen(function*() {
    const wallet = yield* newWallet(owner, owner.customerId, chain, { custody: "custodial", clientReferenceId: undefined, fundingOrderId: orderId })
    yield* Effect.orDie(Effect.flatMap(Store.Store, (store) => store.insert(Wallets, wallet)))
    return wallet
  })

/**
 * `POST /v2/customers/{customerId}/wallets`. Its refusals come in a fixed order, the precedence the spec's error
 * table implies (docs/money.md, "The order of a wallet's refusals"); a request that breaks two rules gets the first.
 * Nothing in the body is checked beyond the schema, so it starts with what is read:
 * 1. the path's customer (404 CUSTOMER_NOT_FOUND, 422 CUSTOMER_NOT_ONBOARDED);
 * 2. its approved crypto_wallet application for the chain (422 UNPROCESSABLE_ENTITY);
 * 3. a clientReferenceId already used by another wallet (409 DUPLICATE_CLIENT_REFERENCE_ID), which the insert finds
 *    last.
 */
export const create = (caller: Auth.Caller, customerId: CustomerId, body: WalletCreate): Effect.Effect<WalletWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    yield* onboardedCustomer(caller, customerId)
    if (!(yield* cryptoWalletApproved(caller, customerId, body.chain))) return yield* noCryptoWalletFeature(body.chain)
    return yield* toWire(yield* open(ownerOf(caller), customerId, body.chain, body.clientReferenceId))
  })

/**
 * `POST /v2/wallets/{walletId}/rotate`: retires the wallet and answers its successor. Its refusals come in a fixed
 * order (docs/money.md, "The order of a wallet's refusals"); a request that breaks two rules gets the first:
 * 1. the wallet (404 WALLET_NOT_FOUND);
 * 2. its state: a rotation it took part in still lasting (409 WALLET_ROTATION_IN_PROGRESS, before its status, so the
 *    retired wallet answers as its successor does until the rotation ends), then its status (409
 *    WALLET_NOT_ROTATABLE), then an unsupported coin's return open from it (422 WALLET_ROTATION_BLOCKED_RETURN);
 * 3. its funds, last: a balance above the dust floor, or money reserved or on its way (422
 *    WALLET_ROTATION_BLOCKED_BALANCE).
 */
export const rotate = (caller: Auth.Caller, id: WalletId): Effect.Effect<WalletWire, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const wallet = yield* get(caller, id, true)
    const nowMs = yield* Clock.currentTimeMillis
    if (rotationUnderway(wallet, nowMs)) {
      return yield* Problem.apiError(
        "WALLET_ROTATION_IN_PROGRESS",
        `The wallet's rotation lasts until ${wallet.rotationEndsAt}: the retired address still forwards to its successor. Rotate after that.`
      )
    }
    if (wallet.status !== "active") return yield* Problem.apiError("WALLET_NOT_ROTATABLE", `The wallet is ${wallet.status}; only an active wallet can rotate.`)
    if (yield* returnPending(caller, wallet)) {
      return yield* Problem.apiError(
        "WALLET_ROTATION_BLOCKED_RETURN",
        "An unsupported coin's return from the wallet is still open (GET /v2/transactions?type=deposit_return); rotate once it ends."
      )
    }
    const floors = (yield* WorldModel.WorldModel).dustFloor
    const accounts = yield* store.page(Ledger.LedgerAccounts, {
      order: "byHolder",
      partition: `${scope(wallet)}/wallet/${wallet.id}`,
      descending: false,
      backward: false,
      from: undefined,
      limit: 100
    })
    for (const account of accounts) {
      const posted = BigInt(account.creditsPosted) - BigInt(account.debitsPosted)
      const moving = BigInt(account.debitsPending) + BigInt(account.creditsPending)
      const floor = parseAmount(account.asset, floors[account.asset] ?? "0")?.units ?? 0n
      if (posted > floor || moving > 0n) {
        return yield* Problem.apiError(
          "WALLET_ROTATION_BLOCKED_BALANCE",
          `The wallet holds ${account.asset} above the dust floor or has money on its way; move it out before rotating.`
        )
      }
    }
    const rotationEndsAt = toIso(nowMs + (yield* WorldModel.WorldModel).rotationForwardingMs)
    const successor = yield* open(ownerOf(caller), wallet.customerId, wallet.chain, undefined, wallet.custody, rotationEndsAt)
    yield* move(wallet, { type: "retire", replacedByWalletId: successor.id, rotationEndsAt })
    return yield* toWire(successor)
  })
