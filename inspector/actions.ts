/**
 * The moves the inspector offers on a resource, as buttons: the server's list (`GET /simulate/actions/{id}`, which
 * says which the state table allows now and why not), or, where it serves none (a live key, a resource it lists no
 * actions for), a fallback list of the endpoints that move the resource. The fallback names endpoints of the
 * contract (their name, method and path are checked against it), and every body a button sends is checked against
 * its endpoint's payload.
 */
import type { Body, EndpointKey, Method, Path } from "./api.ts"
import { prefixOf, type Resource, statusOf } from "./ids.ts"

/** A move on a resource, as the server lists it (`ResourceAction`) or the fallback list has it. */
export interface Move {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly allowed: boolean
  /** Why the state table refuses it now, when it does. */
  readonly reason?: string
}

/** A button: a move, its label and the body it sends. */
export interface Button extends Move {
  readonly label: string
  readonly body: unknown
}

/**
 * A move of the fallback list: an endpoint of the API, named as the server names the action (`executeOrder`) or, where
 * the server has no action of the endpoint's, by the endpoint's name (`endTransaction`); and what refuses it without
 * asking the server.
 */
interface Fallback {
  readonly name: string
  readonly method: "POST"
  readonly path: string
  readonly refusal?: (resource: Resource | undefined) => string | undefined
}

/**
 * An endpoint of the API, `K`, as a move of the fallback list: its name, method and path are the endpoint's. The
 * orders' moves take the server's action names (`executeOrder`), so only their method and path are checked.
 */
type EndpointMove<K extends EndpointKey> = {
  readonly name: K extends `${string}.${infer Name}` ? Name : never
  readonly method: Method<K>
  readonly path: Path<K>
}
type ActionMove<K extends EndpointKey> = Omit<EndpointMove<K>, "name"> & { readonly name: string }

/**
 * The moves of a resource by its prefix, for a server that does not serve `GET /simulate/actions/{id}` (which lists
 * the same endpoints and says which the state table allows now, and why not).
 */
const knownActions: { readonly [prefix: string]: (id: string) => ReadonlyArray<Fallback> } = {
  txn: (id) => [
    { name: "confirmTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/confirm` } satisfies EndpointMove<"simulate.confirmTransaction">,
    { name: "settleTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/settle` } satisfies EndpointMove<"simulate.settleTransaction">,
    { name: "endTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/terminal` } satisfies EndpointMove<"simulate.endTransaction">,
    { name: "returnTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/return` } satisfies EndpointMove<"simulate.returnTransaction">,
    { name: "reviewTransaction", method: "POST", path: `/v2/simulate/transactions/${id}/review` } satisfies EndpointMove<"simulate.reviewTransaction">
  ],
  app: (id) => [{ name: "decideApplication", method: "POST", path: `/v2/simulate/applications/${id}/decision` } satisfies EndpointMove<"simulate.decideApplication">],
  ord: (id) => [
    { name: "executeOrder", method: "POST", path: `/v2/orders/${id}/execute` } satisfies ActionMove<"orders.execute">,
    { name: "cancelOrder", method: "POST", path: `/v2/orders/${id}/cancel` } satisfies ActionMove<"orders.cancel">,
    { name: "failOrder", method: "POST", path: `/v2/simulate/orders/${id}/fail` } satisfies EndpointMove<"simulate.failOrder">
  ],
  rfi: (id) => [{ name: "reviewRfi", method: "POST", path: `/v2/simulate/rfis/${id}` } satisfies EndpointMove<"simulate.reviewRfi">],
  cer: (id) => [{ name: "decideCeremony", method: "POST", path: `/v2/simulate/wallet-ceremonies/${id}/decision` } satisfies EndpointMove<"simulate.decideCeremony">],
  wdl: (id) => [{
    name: "retryDelivery",
    method: "POST",
    path: `/v2/webhooks/deliveries/${id}/retry`,
    refusal: (delivery) => (statusOf(delivery) === "failed" ? undefined : "only a failed delivery can be retried")
  } satisfies EndpointMove<"webhooks.retryDelivery"> & Pick<Fallback, "refusal">]
}

/** The fallback list's moves of the resource `id`, each allowed unless its refusal says why not. */
export const fallbackMoves = (id: string, resource: Resource | undefined): ReadonlyArray<Move> =>
  (knownActions[prefixOf(id)]?.(id) ?? []).map(({ refusal, ...a }) => {
    const reason = refusal?.(resource)
    return reason === undefined ? { ...a, allowed: true } : { ...a, allowed: false, reason }
  })

/** A button's label, and its body or what makes it from the resource. */
type Named = readonly [label: string, body?: object | ((resource: Resource | undefined) => object)]

/**
 * The server's actions (`GET /simulate/actions/{id}`) by name: the button's label and the body it sends (a function
 * of the resource where the body names its parts). The names are the core's (core inspect/ResourceActions.ts), each
 * body its endpoint's payload.
 */
const namedActions: { readonly [name: string]: Named } = {
  confirmTransaction: ["confirm"],
  settleTransaction: ["settle"],
  completeTransaction: ["complete", { outcome: "completed" } satisfies Body<"simulate.endTransaction">],
  failTransaction: ["fail", { outcome: "failed" } satisfies Body<"simulate.endTransaction">],
  cancelTransaction: ["cancel", { outcome: "cancelled" } satisfies Body<"simulate.endTransaction">],
  enterReview: ["enter review", { action: "enter" } satisfies Body<"simulate.reviewTransaction">],
  requestInformation: ["request information", { action: "request_information" } satisfies Body<"simulate.reviewTransaction">],
  clearReview: ["clear review", { action: "clear" } satisfies Body<"simulate.reviewTransaction">],
  rejectDocument: ["reject", { action: "reject" } satisfies Body<"simulate.reviewTransaction">],
  publishRfi: ["publish an RFI", { questions: [{ text: "What is the purpose of this transfer?" }] } satisfies Body<"simulate.publishRfi">],
  returnTransaction: ["return (R01)", { returnCode: "R01" } satisfies Body<"simulate.returnTransaction">],
  cancelPayout: ["cancel payout"],
  executeOrder: ["execute"],
  cancelOrder: ["cancel"],
  failOrder: ["fail", { reasonCode: "provider_rejected" } satisfies Body<"simulate.failOrder">],
  approveApplication: ["approve", { outcome: "approved" } satisfies Body<"simulate.decideApplication">],
  rejectApplication: ["reject", { outcome: "rejected" } satisfies Body<"simulate.decideApplication">],
  complianceResult: ["late compliance failure", {} satisfies Body<"simulate.complianceResult">],
  cancelApplication: ["cancel"],
  respondRfi: ["respond", (rfi: Resource | undefined) => ({ answers: (rfi !== undefined && "questions" in rfi ? rfi.questions : []).map((q) => ({ questionId: q.id, text: "Answered from the inspector." })) }) satisfies Body<"rfis.respond">],
  "reviewRfi.request_more": ["request more", { action: "request_more", questions: [{ text: "Please add the invoice." }] } satisfies Body<"simulate.reviewRfi">],
  "reviewRfi.extend_deadline": ["extend deadline 1 day", { action: "extend_deadline", deadlineSeconds: 86400 } satisfies Body<"simulate.reviewRfi">],
  "reviewRfi.resolve": ["resolve", { action: "resolve" } satisfies Body<"simulate.reviewRfi">],
  "reviewRfi.reopen": ["reopen", { action: "reopen", questions: [{ text: "One more question." }] } satisfies Body<"simulate.reviewRfi">],
  "reviewRfi.cancel": ["cancel", { action: "cancel" } satisfies Body<"simulate.reviewRfi">],
  enrollSigner: ["enroll", {} satisfies Body<"simulate.enrollSigner">],
  addPasskey: ["add a passkey", {} satisfies Body<"simulate.addPasskey">],
  removeSigner: ["remove", {} satisfies Body<"simulate.removeSigner">],
  approveCeremony: ["approve", { outcome: "approved" } satisfies Body<"simulate.decideCeremony">],
  declineCeremony: ["decline", { outcome: "declined" } satisfies Body<"simulate.decideCeremony">],
  "provisionClaim.succeeded": ["provisioning succeeds", { outcome: "succeeded" } satisfies Body<"simulate.provisionClaim">],
  "provisionClaim.failed": ["provisioning fails", { outcome: "failed" } satisfies Body<"simulate.provisionClaim">],
  retryDelivery: ["retry"]
}

/**
 * The buttons one action gives. An action the server names (above) is one button; an endpoint of the fallback list
 * gives one per body worth offering (a decision approves or rejects; a terminal move
 * completes, fails or cancels), each labelled; an endpoint not named here is one button with no body.
 */
export const variantsOf = (resource: Resource | undefined) => (action: Move): ReadonlyArray<Button> => {
  const named = namedActions[action.name]
  if (named !== undefined) {
    const [label, body] = named
    return [{ ...action, label, body: typeof body === "function" ? body(resource) : body }]
  }
  const path = action.path
  const each = (...variants: ReadonlyArray<readonly [label: string, body: unknown]>) => variants.map(([label, body]) => ({ ...action, label, body }))
  if (/\/simulate\/applications\/[^/]+\/decision$/.test(path)) return each(["approve", { outcome: "approved" } satisfies Body<"simulate.decideApplication">], ["reject", { outcome: "rejected" } satisfies Body<"simulate.decideApplication">])
  if (/\/wallet-ceremonies\/[^/]+\/decision$/.test(path)) return each(["approve", { outcome: "approved" } satisfies Body<"simulate.decideCeremony">], ["decline", { outcome: "declined" } satisfies Body<"simulate.decideCeremony">])
  if (/\/transactions\/[^/]+\/terminal$/.test(path)) return each(["complete", { outcome: "completed" } satisfies Body<"simulate.endTransaction">], ["fail", { outcome: "failed" } satisfies Body<"simulate.endTransaction">], ["cancel", { outcome: "cancelled" } satisfies Body<"simulate.endTransaction">])
  if (/\/transactions\/[^/]+\/review$/.test(path)) return each(["review: enter", { action: "enter" } satisfies Body<"simulate.reviewTransaction">], ["review: clear", { action: "clear" } satisfies Body<"simulate.reviewTransaction">], ["review: reject", { action: "reject" } satisfies Body<"simulate.reviewTransaction">])
  if (/\/transactions\/[^/]+\/return$/.test(path)) return each(["return (R01)", { returnCode: "R01" } satisfies Body<"simulate.returnTransaction">])
  if (/\/transactions\/[^/]+\/confirm$/.test(path)) return each(["confirm", undefined])
  if (/\/transactions\/[^/]+\/settle$/.test(path)) return each(["settle", undefined])
  if (/\/simulate\/orders\/[^/]+\/fail$/.test(path)) return each(["fail", { reasonCode: "provider_rejected" } satisfies Body<"simulate.failOrder">])
  if (/\/orders\/[^/]+\/execute$/.test(path)) return each(["execute", undefined])
  if (/\/orders\/[^/]+\/cancel$/.test(path)) return each(["cancel", undefined])
  if (/\/simulate\/rfis\/[^/]+$/.test(path)) return each(["resolve", { action: "resolve" } satisfies Body<"simulate.reviewRfi">], ["extend deadline 1 day", { action: "extend_deadline", deadlineSeconds: 86400 } satisfies Body<"simulate.reviewRfi">], ["cancel", { action: "cancel" } satisfies Body<"simulate.reviewRfi">])
  if (/\/retry$/.test(path)) return each(["retry", undefined])
  // An endpoint's name, in words: settleTransaction is "settle transaction".
  return each([action.name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase(), undefined])
}

/** A move that ends or undoes something (fail, cancel, reject, decline, remove, return): red, and asked first. */
export const destructive = (label: string): boolean => /\b(fail|fails|failure|cancel|reject|decline|remove|return)\b/.test(label)

/** A refusal the server words as `CODE: why`: split, so the why reads first and the code stands beside it. */
export const splitRefusal = (reason: string): { readonly code?: string; readonly why: string } => {
  const m = /^([A-Z][A-Z0-9_]+): (.*)$/s.exec(reason)
  // Both groups take part in every match.
  return m === null ? { why: reason } : { code: m[1]!, why: m[2]! }
}
export const refusalText = (reason: string): string => {
  const { code, why } = splitRefusal(reason)
  return code === undefined ? why : `${why} (${code})`
}
