/**
 * A resource's actions (`GET /sandbox/v2/simulate/actions/{resourceId}`): the simulate calls, and the public calls a
 * tester presses as buttons (cancel a payout or an order, retry a delivery), each with whether the resource's state
 * table allows it now. The answer comes from the machines' own transition functions (TransactionMachine,
 * OrderMachine, ApplicationMachine, RfiMachine, SignerMachine, ClaimMachine, DeliveryMachine), asked with the
 * resource's current state and the move the call would make: there is no second copy of the rules here, so a
 * button the inspector shows enabled is a move the table takes.
 *
 * What the table allows, the endpoint may still refuse for what is not the state's: a body that fails validation, a
 * deposit that cannot be cancelled (only payouts and conversions can), a ceremony's decision without a signer's
 * session. `reason` is the refusal's code and what in the state refuses it.
 */
import { Clock, Effect } from "effect"
import * as Problem from "../kernel/Problem.ts"
import * as Store from "../kernel/Store.ts"
import * as OrderMachine from "../money/OrderMachine.ts"
import * as Orders from "../money/Orders.ts"
import * as RfiMachine from "../money/RfiMachine.ts"
import * as Rfis from "../money/Rfis.ts"
import * as TransactionMachine from "../money/TransactionMachine.ts"
import * as Transactions from "../money/Transactions.ts"
import * as ApplicationMachine from "../onboarding/ApplicationMachine.ts"
import * as Applications from "../onboarding/Applications.ts"
import * as ClaimMachine from "../signing/ClaimMachine.ts"
import * as Resources from "./Resources.ts"
import * as Roster from "../signing/Roster.ts"
import * as SignerMachine from "../signing/SignerMachine.ts"
import * as DeliveryMachine from "../webhooks/DeliveryMachine.ts"
import * as Deliveries from "../webhooks/Deliveries.ts"

export type ResourceType = Resources.ResourceType

export interface ResourceAction {
  readonly name: string
  readonly method: "POST" | "DELETE"
  /** Under the sandbox's base address. */
  readonly path: string
  readonly allowed: boolean
  readonly reason?: string
}

export interface ResourceActions {
  readonly resourceId: string
  readonly resourceType: ResourceType
  readonly actions: ReadonlyArray<ResourceAction>
}

/** A move's verdict: allowed, or the refusal's code and why. */
type Verdict = { readonly allowed: true } | { readonly allowed: false; readonly reason: string }

const allowed: Verdict = { allowed: true }
const refused = (code: string, why: string): Verdict => ({ allowed: false, reason: `${code}: ${why}` })

const action = (name: string, path: string, verdict: Verdict, method: "POST" | "DELETE" = "POST"): ResourceAction =>
  verdict.allowed ? { name, method, path, allowed: true } : { name, method, path, allowed: false, reason: verdict.reason }

const notFound = () => Problem.apiError("NOT_FOUND", "No transaction, order, application, RFI, signer, ceremony, claim or webhook delivery with this id exists in this sandbox.")

// --- transactions ------------------------------------------------------------------------------------------------

const transactionVerdict = (t: Transactions.StoredTransaction, move: TransactionMachine.Move): Verdict => {
  const outcome = TransactionMachine.transition(t, move)
  return "refused" in outcome ? refused(outcome.refused, outcome.reason) : allowed
}

const transactionActions = (t: Transactions.StoredTransaction): ReadonlyArray<ResourceAction> => {
  const base = `/v2/simulate/transactions/${t.id}`
  return [
    action("confirmTransaction", `${base}/confirm`, transactionVerdict(t, { type: "start" })),
    action("settleTransaction", `${base}/settle`, transactionVerdict(t, { type: "settle" })),
    action("failTransaction", `${base}/terminal`, transactionVerdict(t, { type: "fail" })),
    action("cancelTransaction", `${base}/terminal`, transactionVerdict(t, { type: "cancel" })),
    action("enterReview", `${base}/review`, transactionVerdict(t, { type: "enter_review" })),
    action("requestInformation", `${base}/review`, transactionVerdict(t, { type: "request_information" })),
    action("clearReview", `${base}/review`, transactionVerdict(t, { type: "clear_review" })),
    action("rejectDocument", `${base}/review`, transactionVerdict(t, { type: "reject" })),
    action("publishRfi", `${base}/rfi`, transactionVerdict(t, { type: "request_information" })),
    action("returnTransaction", `${base}/return`, transactionVerdict(t, { type: "return" })),
    // The public cancel of a payout (a withdrawal transaction): POST /v2/payouts/{id}/cancel.
    ...(t.type === "withdrawal" ? [action("cancelPayout", `/v2/payouts/${t.id}/cancel`, transactionVerdict(t, { type: "cancel" }))] : [])
  ]
}

// --- orders ------------------------------------------------------------------------------------------------------

const orderVerdict = (o: Orders.StoredOrder, move: OrderMachine.Move): Verdict => {
  const outcome = OrderMachine.transition(o, move)
  if ("next" in outcome) return allowed
  if ("refused" in outcome) return refused(outcome.refused, `the order's state (status ${o.status}${o.executing ? ", executing" : ""}${o.sent ? ", sent" : ""}) does not allow it.`)
  return refused("CONFLICT", `the move would change nothing: the order is ${o.status}.`)
}

const orderActions = (o: Orders.StoredOrder, nowMs: number): ReadonlyArray<ResourceAction> => [
  action("executeOrder", `/v2/orders/${o.id}/execute`, orderVerdict(o, { type: "execute", nowMs })),
  action("cancelOrder", `/v2/orders/${o.id}/cancel`, orderVerdict(o, { type: "cancel" })),
  action("failOrder", `/v2/simulate/orders/${o.id}/fail`, orderVerdict(o, { type: "fail" }))
]

// --- applications ----------------------------------------------------------------------------------------------

const applicationVerdict = (a: Applications.Application, move: ApplicationMachine.Move): Verdict => {
  const outcome = ApplicationMachine.transition(Applications.machineState(a), move)
  return "refused" in outcome
    ? refused(outcome.refused, `the application is ${a.status}${Applications.isCancelling(a) ? " with a cancel in progress" : ""}.`)
    : allowed
}

const applicationActions = (a: Applications.Application): ReadonlyArray<ResourceAction> => [
  action("approveApplication", `/v2/simulate/applications/${a.id}/decision`, applicationVerdict(a, { _tag: "Decide", outcome: "approved", bySimulate: true })),
  action("rejectApplication", `/v2/simulate/applications/${a.id}/decision`, applicationVerdict(a, { _tag: "Decide", outcome: "rejected", bySimulate: true })),
  action("complianceResult", `/v2/simulate/applications/${a.id}/compliance-result`, applicationVerdict(a, { _tag: "LateCompliance" })),
  action("cancelApplication", `/v2/applications/${a.id}/cancel`, applicationVerdict(a, { _tag: "RequestCancel" }))
]

// --- RFIs --------------------------------------------------------------------------------------------------------

const rfiVerdict = (r: Rfis.StoredRfi, move: RfiMachine.Move): Verdict => {
  const outcome = RfiMachine.transition(r.status, move)
  return "refused" in outcome ? refused(outcome.refused, `the RFI is ${r.status}.`) : allowed
}

const rfiActions = (r: Rfis.StoredRfi): ReadonlyArray<ResourceAction> => [
  action("respondRfi", `/v2/rfis/${r.id}/responses`, rfiVerdict(r, { type: "respond" })),
  ...(["request_more", "extend_deadline", "resolve", "reopen", "cancel"] as const).map((review) =>
    action(`reviewRfi.${review}`, `/v2/simulate/rfis/${r.id}`, rfiVerdict(r, { type: review }))
  )
]

// --- signers, ceremonies and claims ------------------------------------------------------------------------------

const signerVerdict = (state: SignerMachine.RosterState, move: SignerMachine.Move): Verdict => {
  const outcome = SignerMachine.transition(state, move)
  return "refused" in outcome ? refused(outcome.refused, outcome.reason) : allowed
}

/** The passkeys an enrollment registers at least: none for a machine signer, two for a passkey admin, else one. */
const leastPasskeys = (signer: Roster.StoredSigner) => signer.credentialType === "api_key" ? 0 : signer.role === "admin" ? SignerMachine.adminPasskeys : 1

const signerActions = (signer: Roster.StoredSigner, state: SignerMachine.RosterState): ReadonlyArray<ResourceAction> => {
  const base = `/v2/simulate/wallet-signers/${signer.id}`
  return [
    action("enrollSigner", `${base}/enroll`, signerVerdict(state, { type: "enroll", passkeyCount: leastPasskeys(signer) })),
    action("addPasskey", `${base}/passkeys`, signerVerdict(state, { type: "add_passkey" })),
    action("removeSigner", `${base}/remove`, signerVerdict(state, { type: "ops_remove" }))
  ]
}

const ceremonyActions = (
  ceremony: Roster.StoredCeremony & { readonly type: SignerMachine.SignerCeremonyType },
  state: SignerMachine.RosterState
): ReadonlyArray<ResourceAction> => {
  // The ceremony asked about, whether or not it is the signer's latest.
  const asked: SignerMachine.RosterState = { ...state, ceremony: { type: ceremony.type, status: ceremony.status } }
  const path = `/v2/simulate/wallet-ceremonies/${ceremony.id}/decision`
  return [
    action("approveCeremony", path, signerVerdict(asked, { type: "approve_ceremony" })),
    action("declineCeremony", path, signerVerdict(asked, { type: "decline_ceremony" }))
  ]
}

const originChangeVerdict = (state: SignerMachine.OriginChangeState, move: SignerMachine.OriginChangeMove): Verdict => {
  const outcome = SignerMachine.originChange(state, move)
  return "refused" in outcome ? refused(outcome.refused, outcome.reason) : allowed
}

/** A roster-wide webauthn_origin_change, decided by its own table (SignerMachine.ts `originChange`). */
const originChangeActions = (ceremony: Roster.StoredCeremony, activeAdmins: number): ReadonlyArray<ResourceAction> => {
  const state: SignerMachine.OriginChangeState = { latest: ceremony.status, activeAdmins }
  const path = `/v2/simulate/wallet-ceremonies/${ceremony.id}/decision`
  return [
    action("approveCeremony", path, originChangeVerdict(state, "approve_ceremony")),
    action("declineCeremony", path, originChangeVerdict(state, "decline_ceremony"))
  ]
}

const claimVerdict = (claim: Roster.StoredClaim, move: ClaimMachine.Move): Verdict => {
  const outcome = ClaimMachine.transition({ status: claim.status, provisioned: claim.provisioned }, move)
  return "refused" in outcome ? refused(outcome.refused, outcome.reason) : allowed
}

const claimActions = (claim: Roster.StoredClaim): ReadonlyArray<ResourceAction> => [
  action("provisionClaim.succeeded", `/v2/simulate/claims/${claim.id}/provisioning`, claimVerdict(claim, { type: "provisioned" })),
  action("provisionClaim.failed", `/v2/simulate/claims/${claim.id}/provisioning`, claimVerdict(claim, { type: "provisioning_failed" }))
]

// --- webhook deliveries ------------------------------------------------------------------------------------------

const deliveryActions = (d: Deliveries.WebhookDelivery): ReadonlyArray<ResourceAction> => {
  const outcome = DeliveryMachine.transition({ status: d.status, run: d.run, attemptsInRun: d.attemptsInRun }, { type: "retry" })
  const verdict = DeliveryMachine.isStep(outcome)
    ? allowed
    : "refused" in outcome
    ? refused(outcome.refused, outcome.reason)
    : refused("WEBHOOK_DELIVERY_NOT_RETRYABLE", `the delivery is ${d.status}.`)
  return [action("retryDelivery", `/v2/webhooks/deliveries/${d.id}/retry`, verdict)]
}

/**
 * The signer table's state of `signer`, as `Roster.rosterState` builds it for a move, read without its row locks:
 * this only reads.
 */
const rosterStateOf = (signer: Roster.StoredSigner) =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    const ceremony = signer.ceremonyId === undefined ? undefined : yield* store.get(Roster.WalletCeremonies, signer.ceremonyId)
    const roster = yield* Roster.rosterOf(signer.claimId)
    const state: SignerMachine.RosterState = {
      signer: { status: signer.status, role: signer.role, credentialType: signer.credentialType, passkeyCount: signer.passkeyCount },
      // A roster-wide origin change is not the signer's ceremony (Roster.rosterState reads it the same way).
      ceremony: ceremony === undefined || ceremony.type === "webauthn_origin_change" ? undefined : { type: ceremony.type, status: ceremony.status },
      otherAdmins: roster.filter((s) => s.id !== signer.id && s.role === "admin" && SignerMachine.isActive(s.status)).length
    }
    return state
  })

// --- the lookup ----------------------------------------------------------------------------------------------------

/** The actions of one of the organization's sandbox resources, found by its id's prefix (Resources.ts); 404 for any other id. */
export const resourceActions = (organizationId: string, resourceId: string): Effect.Effect<ResourceActions, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    const found = yield* Resources.find(organizationId, resourceId)
    if (found === undefined) return yield* notFound()
    const actions = yield* actionsOf(found.type, found.row)
    return actions === undefined ? yield* notFound() : { resourceId, resourceType: found.type, actions }
  })

/** A found resource's actions; undefined for a ceremony that names no signer or roster (nothing decides it). */
const actionsOf = (type: ResourceType, row: Resources.ResourceRow): Effect.Effect<ReadonlyArray<ResourceAction> | undefined, never, Store.Store> =>
  Effect.gen(function*() {
    const store = yield* Store.Store
    switch (type) {
      case "transaction":
        return transactionActions(row as Transactions.StoredTransaction)
      case "order":
        return orderActions(row as Orders.StoredOrder, yield* Clock.currentTimeMillis)
      case "application":
        return applicationActions(row as Applications.Application)
      case "rfi":
        return rfiActions(row as Rfis.StoredRfi)
      case "wallet_signer":
        return signerActions(row as Roster.StoredSigner, yield* rosterStateOf(row as Roster.StoredSigner))
      case "wallet_ceremony": {
        const ceremony = row as Roster.StoredCeremony
        if (ceremony.type === "webauthn_origin_change") {
          if (ceremony.claimId === undefined) return undefined
          const roster = yield* Roster.rosterOf(ceremony.claimId)
          const activeAdmins = roster.filter((s) => s.role === "admin" && SignerMachine.isActive(s.status)).length
          return originChangeActions(ceremony, activeAdmins)
        }
        if (ceremony.walletSignerId === undefined) return undefined
        const signer = yield* store.get(Roster.WalletSigners, ceremony.walletSignerId)
        if (signer === undefined) return undefined
        return ceremonyActions({ ...ceremony, type: ceremony.type }, yield* rosterStateOf(signer))
      }
      case "claim":
        return claimActions(row as Roster.StoredClaim)
      case "webhook_delivery":
        return deliveryActions(row as Deliveries.WebhookDelivery)
    }
  })
