/**
 * The endpoint handlers: thin, each reads the caller and calls the engine.
 */
import {
  Applications,
  Auth,
  Cancellation,
  Ceremonies,
  Claims,
  Customers,
  Decisions,
  Deliveries,
  DeliveryWorker,
  DepositReturns,
  Deposits,
  Documents,
  Endpoints,
  FanOut,
  Forks,
  Idempotency,
  IdvLinks,
  Orders,
  Outbox,
  PayoutRequirements,
  Payouts,
  Pricing,
  Problem,
  Quotes,
  Recipients,
  Requirements,
  Reset,
  Restrictions,
  Rfis,
  Roster,
  Sessions,
  SigningRequests,
  SnapshotFiles,
  Snapshots,
  Store,
  Submissions,
  Tenancy,
  Timers,
  Transactions,
  TransferSigning,
  VirtualAccounts,
  WalletFreeze,
  Wallets
} from "@fos/core"
import {
  CustomerSorts,
  defaultPageSize,
  type DeliveryStatus,
  DeliveryStatuses,
  DeprecatedEventTypes,
  EventExamples,
  EventTypes,
  FeatureTypes,
  parseIso,
  toIso,
  wholeList
} from "@fos/contract"

import { Clock, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { FaultsLive } from "./FaultHandlers.ts"
import { ListenersLive } from "./ListenerHandlers.ts"
import { group } from "./HandlerGroups.ts"
import { InspectLive } from "./InspectHandlers.ts"
import { OutcomesLive } from "./OutcomeHandlers.ts"
import { CurrentCaller, CurrentUpload, ServerApi, withCaller } from "./ServerApi.ts"

const PortalLive = group(ServerApi, "portal", (handlers) =>
  // The cheapest authenticated route, so the one a client polls: a short chain of effects rather than a generator,
  // over the engine's store taken once.
  Effect.map(Store.Store, (store) =>
    handlers.handle("me", () =>
      withCaller((caller) => {
        const key = caller.key
        // A caller its host named (Auth.HostCaller) is its user, if the host named one, and has no key: its
        // `apiKey` tells the access the host granted, and no last four characters.
        const userId = Auth.isApiKey(key) ? key.createdBy : key.userId
        if (userId === undefined) return Effect.fail(Problem.apiError("USER_NOT_FOUND", "The host that embeds the engine named no user for this caller."))
        const answer = (user: Tenancy.User | undefined) => {
          // A key's creator is never removed, and the gate admitted the host's user; if it were missing, this throw
          // is a defect (a 500).
          if (user === undefined) throw new Error(`caller's user ${userId} missing`)
          const org = caller.organization
          return {
            user: { id: user.id, email: user.email, role: user.role, emailVerified: user.emailVerified, createdAt: user.createdAt },
            organization: { id: org.id, name: org.name, status: org.status, features: [...org.features], createdAt: org.createdAt },
            apiKey: { access: key.access, environment: caller.environment, last4: Auth.isApiKey(key) ? key.last4 : "" }
          }
        }
        // A store that reads at once (memory) is read in the step that answers.
        const now = store.getNow
        return now === undefined ? Effect.map(store.get(Tenancy.Users, userId), answer) : Effect.sync(() => answer(now(Tenancy.Users, userId)))
      }))))

const CustomersLive = group(ServerApi, "customers", (handlers) =>
  handlers
    .handle("list", ({ query }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const page = yield* Customers.list(caller, {
          cursor: query.cursor,
          limit: query.limit ?? defaultPageSize,
          direction: query.direction ?? "forward",
          sortBy: query.sortBy ?? CustomerSorts[0],
          sortOrder: query.sortOrder ?? "desc"
        })
        return { data: [...page.data], meta: page.meta }
      }))
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Effect.map(Customers.get(caller, params.customerId), Customers.toWire)))
    .handle("submitUpdate", ({ params, payload }) =>
      CurrentCaller.use((caller) => Submissions.submitCustomerUpdate(caller, params.customerId, payload)).pipe(Effect.map(mutable)))
    .handle("featureRequirements", ({ params, query }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const type = FeatureTypes.find((t) => t === query.type.toLowerCase())
        if (type === undefined) {
          return yield* Problem.invalidRequest([{ pointer: "/type", detail: `must be one of ${FeatureTypes.map((t) => t.toUpperCase()).join(", ")}` }], "query")
        }
        const customer = yield* Customers.get(caller, params.customerId)
        return { type, requirements: Requirements.featureRequirements(type, customer.country).map(mutable) }
      }))
    .handle("submitFeature", ({ params, payload }) =>
      CurrentCaller.use((caller) => Submissions.submitFeatureApplication(caller, params.customerId, payload)).pipe(Effect.map(mutable)))
    .handle("listVirtualAccounts", ({ params, query }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        yield* Customers.get(caller, params.customerId)
        const page = yield* VirtualAccounts.list(caller, params.customerId, listQueryOf(query))
        return { data: page.data.map(mutable), meta: page.meta }
      }))
    .handle("getVirtualAccount", ({ params }) =>
      CurrentCaller.use((caller) => Effect.flatMap(VirtualAccounts.get(caller, params.id), VirtualAccounts.toWire)).pipe(Effect.map(mutable))))

/** The last instant a wire timestamp (four-digit year) can show. */
const maxWireInstantMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const notVirtual = () =>
  Effect.fail(Problem.apiError("CONFLICT", "The server runs on the system clock; start it with --clock virtual to control time.", {
    resolution: "Restart the server with --clock virtual (or create the engine with clock: \"virtual\") to move time; the system clock cannot be advanced."
  }))

const countsOf = (counts: Readonly<Record<string, number>>) => ({
  total: Object.values(counts).reduce((a, b) => a + b, 0),
  by: { ...counts }
})

/** An advance's report as the wire has it (contract ClockAdvanced). */
const advanceToWire = (report: Timers.AdvanceReport) => ({
  now: toIso(report.nowMs),
  mode: "virtual" as const,
  from: toIso(report.fromMs),
  timersFired: countsOf(report.timersFired),
  eventsEmitted: countsOf(report.eventsEmitted),
  ...(report.nextDueMs === undefined ? {} : { nextDueAt: toIso(report.nextDueMs) })
})

const SimulateLive = group(ServerApi, "simulate", (handlers) =>
  handlers
    .handle("emitEvent", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const store = yield* Store.Store
        const event = yield* store.transaction(Outbox.emitEvent({
          type: payload.type,
          organizationId: caller.organization.id,
          environment: caller.environment,
          data: EventExamples[payload.type]
        }))
        return { ...FanOut.envelopeOf(event), data: event.data }
      }))
    .handle("decideApplication", ({ params, payload }) =>
      CurrentCaller.use((caller) => Decisions.simulate(caller, params.id, payload)).pipe(Effect.map(mutable)))
    .handle("complianceResult", ({ params, payload }) =>
      CurrentCaller.use((caller) => Decisions.simulateLateCompliance(caller, params.id, payload)).pipe(Effect.map(mutable)))
    .handle("restrictCustomer", ({ params, payload }) =>
      CurrentCaller.use((caller) => Payouts.restrictCustomerWithPayouts(caller, params.customerId, payload.type ?? "account")).pipe(Effect.map(Customers.toWire)))
    // The sandbox's restriction: the simulate call restricts the sandbox alone, never live (docs/decisions.md).
    .handle("restrictOrganization", () =>
      CurrentCaller.use((caller) => Restrictions.restrictOrganization(caller.organization.id, ["sandbox"])).pipe(
        Effect.map((o) => ({ organizationId: o.id, restricted: true }))
      ))
    .handle("unrestrictOrganization", () =>
      CurrentCaller.use((caller) => Restrictions.liftOrganization(caller.organization.id, ["sandbox"])).pipe(
        Effect.map((o) => ({ organizationId: o.id, restricted: false }))
      ))
    .handle("reset", () => CurrentCaller.use((caller) => Reset.resetSandbox(caller.organization.id)).pipe(Effect.map(mutable)))
    .handle("flushWebhooks", () =>
      CurrentCaller.use((caller) =>
        Effect.map(DeliveryWorker.flushDeliveries([{ organizationId: caller.organization.id, environment: caller.environment }]), (report) => ({
          deliveries: report.deliveries.map(Deliveries.toWire),
          complete: report.complete
        }))
      ).pipe(Effect.map(mutable)))
    // Snapshots of the caller's sandbox (Snapshots.ts, docs/snapshots.md).
    .handle("createSnapshot", ({ query }) => CurrentCaller.use((caller) => Snapshots.take(caller.organization.id, { label: query.label })).pipe(Effect.map(mutable)))
    .handle("listSnapshots", ({ query }) =>
      CurrentCaller.use((caller) => Snapshots.list(caller.organization.id, listQueryOf(query))).pipe(Effect.map((p) => ({ data: [...p.data], meta: p.meta }))))
    .handle("getSnapshot", ({ params }) => CurrentCaller.use((caller) => Snapshots.get(caller.organization.id, params.id)).pipe(Effect.map(mutable)))
    .handle("restoreSnapshot", ({ params }) =>
      CurrentCaller.use((caller) => Snapshots.restore(caller.organization.id, params.id)).pipe(Effect.map(mutable)))
    .handle("deleteSnapshot", ({ params }) => CurrentCaller.use((caller) => Snapshots.deleteSnapshot(caller.organization.id, params.id)))
    // The file's text as the engine wrote it, which the router sends as it is, as an attachment (Policies.ts,
    // `Attachment`): the same world is the same bytes, whoever serves it.
    .handle("exportSnapshot", ({ params }) =>
      CurrentCaller.use((caller) => SnapshotFiles.exportFile(caller.organization.id, params.id)).pipe(Effect.map((exported) => exported.text as never)))
    // The engine decodes the file itself, its format and version first (Policies.ts, `DecodedByEngine`).
    .handle("importSnapshot", ({ payload, query }) =>
      CurrentCaller.use((caller) => SnapshotFiles.importFile(caller.organization.id, payload as unknown, { label: query.label })).pipe(Effect.map(mutable)))
    // Forks of the caller's snapshots, each an organization of its own (Forks.ts, docs/snapshots.md, "Forks").
    .handle("createFork", ({ params, query }) => CurrentCaller.use((caller) => Forks.make(caller.organization.id, params.id, { stream: query.stream })).pipe(Effect.map(mutable)))
    .handle("listForks", () => CurrentCaller.use((caller) => Effect.map(Forks.list(caller.organization.id), (forks) => ({ data: [...forks], meta: wholeList(forks).meta }))))
    .handle("deleteFork", ({ params }) => CurrentCaller.use((caller) => Forks.remove(caller.organization.id, params.organizationId)))
    // The caller's clock: the request runs on it (Gate.ts reads it once under the virtual clock).
    .handle("clock", () =>
      Effect.gen(function*() {
        const time = yield* Timers.TimeControl
        return { now: toIso(yield* Clock.currentTimeMillis), mode: time.mode }
      }))
    .handle("advanceClock", ({ payload }) =>
      Effect.gen(function*() {
        const time = yield* Timers.TimeControl
        if (time.mode !== "virtual") return yield* notVirtual()
        const caller = yield* CurrentCaller
        // The target is worked out from the clock's time as the advance takes it over, so that an advance refused
        // because another is running never half-happens.
        const targetOf = (now: number) =>
          Effect.gen(function*() {
            let target: number
            if (payload.seconds !== undefined) target = now + payload.seconds * 1000
            else {
              const to = parseIso(payload.to ?? "")
              if (to === undefined) {
                return yield* Problem.invalidRequest([{ pointer: "/to", detail: "must be an ISO 8601 timestamp with a time zone" }])
              }
              if (to < now) {
                return yield* Problem.invalidRequest([{ pointer: "/to", detail: "must not be before the clock's current time" }])
              }
              target = to
            }
            if (target > maxWireInstantMs) {
              return yield* Problem.invalidRequest([{ pointer: payload.seconds !== undefined ? "/seconds" : "/to", detail: "would move the clock past 9999-12-31T23:59:59.999Z" }])
            }
            return target
          })
        // Runs to its end even if the client goes away (TimeControl.advanceClock is uninterruptible). Its key lets a
        // retry of an advance whose process died before answering find what that advance did (kernel/Clocks.ts).
        const key = (yield* HttpServerRequest.HttpServerRequest).headers["idempotency-key"]
        const keyed = key === undefined ? undefined : { key, resumed: yield* Idempotency.ResumedClaim }
        const report = yield* time.advanceClock(Tenancy.scopeOf(caller.organization.id, caller.environment), targetOf, keyed)
        return advanceToWire(report)
      }))
    .handle("deposit", ({ payload }) =>
      CurrentCaller.use((caller) => Effect.map(Deposits.simulate(caller, payload), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("confirmTransaction", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(Deposits.simulateTransactionStep(caller, params.id, { type: "confirm" }), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("settleTransaction", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(Deposits.simulateTransactionStep(caller, params.id, { type: "settle" }), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("endTransaction", ({ params, payload }) =>
      CurrentCaller.use((caller) =>
        Effect.map(Deposits.simulateTransactionStep(caller, params.id, { type: "terminal", terminal: payload }), Transactions.toWire)
      ).pipe(Effect.map(mutable)))
    .handle("returnTransaction", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Payouts.simulateReturn(caller, params.id, payload), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("publishRfi", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Rfis.publish(caller, params.id, payload), Rfis.toWire)).pipe(Effect.map(mutable)))
    .handle("reviewRfi", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Rfis.review(caller, params.id, payload), Rfis.toWire)).pipe(Effect.map(mutable)))
    .handle("reviewTransaction", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Deposits.simulateReview(caller, params.id, payload), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("provisionClaim", ({ params, payload }) =>
      CurrentCaller.use((caller) => Claims.simulateProvisioning(caller, params.claimId, payload.outcome)).pipe(Effect.map(mutable)))
    .handle("enrollSigner", ({ params, payload }) =>
      CurrentCaller.use((caller) => Ceremonies.simulateEnrollment(caller, params.signerId, payload.passkeyCount)).pipe(Effect.map(mutable)))
    .handle("addPasskey", ({ params }) => CurrentCaller.use((caller) => Ceremonies.simulatePasskeyAddition(caller, params.signerId)))
    .handle("signerLogin", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.flatMap(Ceremonies.signerForLogin(caller, params.signerId, payload.authentication ?? "succeeded"), Sessions.issue)))
    .handle("removeSigner", ({ params }) => CurrentCaller.use((caller) => Ceremonies.simulateOpsRemoval(caller, params.signerId)).pipe(Effect.map(mutable)))
    .handle("decideCeremony", ({ params, headers, payload }) =>
      CurrentCaller.use((caller) =>
        Effect.flatMap(Sessions.signerOf(caller, headers.authorization), ({ signer }) => Ceremonies.decide(caller, signer, params.ceremonyId, payload.outcome))
      ).pipe(Effect.map(mutable)))
    .handle("signTransaction", ({ params, headers, payload }) =>
      CurrentCaller.use((caller) =>
        Effect.flatMap(Sessions.signerOf(caller, headers.authorization), ({ signer }) =>
          Effect.map(TransferSigning.simulateSignature(caller, params.id, signer, payload), Transactions.toWire))
      ).pipe(Effect.map(mutable)))
    .handle("holdByReceivePolicy", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(WalletFreeze.simulateReceivePolicyHold(caller, params.id), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("unsupportedDeposit", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(DepositReturns.simulateUnsupportedDeposit(caller, params.walletId, payload), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("startOriginChange", ({ params, payload }) =>
      CurrentCaller.use((caller) => Ceremonies.startOriginChange(caller, params.walletId, payload)).pipe(Effect.map(mutable)))
    .handle("misconfigureWallet", ({ params }) =>
      CurrentCaller.use((caller) => WalletFreeze.simulateWalletMisconfigured(caller, params.walletId)).pipe(Effect.map(mutable)))
    .handle("setRate", ({ payload }) => CurrentCaller.use((caller) => Pricing.setRate(caller, payload)))
    .handle("failOrder", ({ params, payload }) =>
      CurrentCaller.use((caller) => Orders.simulateOrderFailure(caller, params.orderId, payload.reasonCode, payload.at)).pipe(Effect.map(mutable))))

const SignersLive = group(ServerApi, "signers", (handlers) =>
  handlers
    .handle("claim", ({ params, payload }) => CurrentCaller.use((caller) => Claims.claimNonCustodial(caller, params.customerId, payload)).pipe(Effect.map(mutable)))
    .handle("reissueAdminApproval", ({ params }) => CurrentCaller.use((caller) => Ceremonies.reissueAdminApproval(caller, params.customerId, params.signerId)))
    .handle("session", ({ headers }) =>
      CurrentCaller.use((caller) =>
        Effect.map(Sessions.signerOf(caller, headers.authorization), ({ signer, expiresAt }) => ({ signer: mutable(Roster.signerToWire(signer)), expiresAt }))
      ))
    .handle("startCeremony", ({ headers, payload }) =>
      CurrentCaller.use((caller) =>
        Effect.flatMap(Sessions.signerOf(caller, headers.authorization), ({ signer }) =>
          Ceremonies.start(caller, signer, payload.type, payload.walletSignerId as never))
      ).pipe(Effect.map(mutable)))
    .handle("signingRequest", ({ params }) => CurrentCaller.use((caller) => SigningRequests.get(caller, params.id)).pipe(Effect.map(mutable)))
    .handle("approveSigningRequest", ({ params, headers }) =>
      CurrentCaller.use((caller) =>
        Effect.flatMap(Sessions.signerOf(caller, headers.authorization), ({ signer }) => SigningRequests.decide(caller, params.id, signer, "approve"))
      ).pipe(Effect.map(mutable)))
    .handle("rejectSigningRequest", ({ params, headers }) =>
      CurrentCaller.use((caller) =>
        Effect.flatMap(Sessions.signerOf(caller, headers.authorization), ({ signer }) => SigningRequests.decide(caller, params.id, signer, "decline"))
      ).pipe(Effect.map(mutable))))

const QuotesLive = group(ServerApi, "quotes", (handlers) =>
  handlers.handle("create", ({ payload }) =>
    CurrentCaller.use((caller) => Quotes.create(caller, payload)).pipe(Effect.map((q) => ({ ...q, options: q.options.map(mutable) })))))

const OrdersLive = group(ServerApi, "orders", (handlers) =>
  handlers
    .handle("create", ({ payload }) => CurrentCaller.use((caller) => Orders.create(caller, payload)).pipe(Effect.map(mutable)))
    .handle("list", ({ query }) =>
      CurrentCaller.use((caller) =>
        Orders.list(caller, { status: query.status, customerId: query.customerId }, listQueryOf(query))
      ).pipe(Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))))
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Effect.map(Orders.get(caller, params.orderId), Orders.toWire)).pipe(Effect.map(mutable)))
    .handle("execute", ({ params }) => CurrentCaller.use((caller) => Orders.executeOrder(caller, params.orderId)).pipe(Effect.map(mutable)))
    .handle("cancel", ({ params }) => CurrentCaller.use((caller) => Orders.cancel(caller, params.orderId)).pipe(Effect.map(mutable))))

const WalletsLive = group(ServerApi, "wallets", (handlers) =>
  handlers
    .handle("create", ({ params, payload }) => CurrentCaller.use((caller) => Wallets.create(caller, params.customerId, payload)).pipe(Effect.map(mutable)))
    .handle("list", ({ params, query }) =>
      CurrentCaller.use((caller) => Wallets.list(caller, params.customerId, listQueryOf(query))).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Effect.flatMap(Wallets.get(caller, params.walletId), Wallets.toWire)).pipe(Effect.map(mutable)))
    .handle("rotate", ({ params }) => CurrentCaller.use((caller) => Wallets.rotate(caller, params.walletId)).pipe(Effect.map(mutable))))

const TransactionsLive = group(ServerApi, "transactions", (handlers) =>
  handlers
    .handle("list", ({ query }) =>
      CurrentCaller.use((caller) =>
        Transactions.list(caller, { type: query.type, status: query.status, customerId: query.customerId }, listQueryOf(query))
      ).pipe(Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))))
    .handle("get", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(Transactions.get(caller, params.id), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("senderInformation", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Deposits.supplySenderInformation(caller, params.id, payload), Transactions.toWire)).pipe(Effect.map(mutable))))

const RecipientsLive = group(ServerApi, "recipients", (handlers) =>
  handlers
    .handle("createWhitelistRecipient", ({ params, payload }) =>
      CurrentCaller.use((caller) => Recipients.createWhitelist(caller, params.customerId, payload)).pipe(Effect.map(Recipients.whitelistRecipientToWire), Effect.map(mutable)))
    .handle("listWhitelistRecipients", ({ params, query }) =>
      CurrentCaller.use((caller) => Recipients.list(caller, "whitelist_recipient", params.customerId, listQueryOf(query), Recipients.whitelistRecipientToWire)).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("getWhitelistRecipient", ({ params }) =>
      CurrentCaller.use((caller) => Recipients.get(caller, "whitelist_recipient", params.id)).pipe(Effect.map(Recipients.whitelistRecipientToWire), Effect.map(mutable)))
    .handle("removeWhitelistRecipient", ({ params }) => CurrentCaller.use((caller) => Recipients.remove(caller, "whitelist_recipient", params.id)))
    .handle("createRegisteredAddress", ({ params, payload }) =>
      CurrentCaller.use((caller) => Recipients.createRegisteredAddress(caller, params.customerId, payload)).pipe(Effect.map(Recipients.registeredAddressToWire), Effect.map(mutable)))
    .handle("listRegisteredAddresses", ({ params, query }) =>
      CurrentCaller.use((caller) => Recipients.list(caller, "registered_address", params.customerId, listQueryOf(query), Recipients.registeredAddressToWire)).pipe(
        Effect.map((page) => ({ data: page.data.map(mutable), meta: page.meta }))
      ))
    .handle("getRegisteredAddress", ({ params }) =>
      CurrentCaller.use((caller) => Recipients.get(caller, "registered_address", params.id)).pipe(Effect.map(Recipients.registeredAddressToWire), Effect.map(mutable)))
    .handle("removeRegisteredAddress", ({ params }) => CurrentCaller.use((caller) => Recipients.remove(caller, "registered_address", params.id))))

const PayoutsLive = group(ServerApi, "payouts", (handlers) =>
  handlers
    .handle("requirements", ({ payload }) =>
      PayoutRequirements.payoutRequirements(payload).pipe(Effect.map((r) => ({
        recipient: r.recipient.map(mutable),
        purpose: { ...r.purpose, examples: [...r.purpose.examples] },
        documents: { ...r.documents, acceptedTypes: [...r.documents.acceptedTypes] },
        travelRule: { ...r.travelRule, fields: r.travelRule.fields.map(mutable) },
        fee: r.fee
      }))))
    .handle("create", ({ payload }) =>
      CurrentCaller.use((caller) => Effect.map(Payouts.create(caller, payload), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("get", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(Payouts.get(caller, params.id), Transactions.toWire)).pipe(Effect.map(mutable)))
    .handle("cancel", ({ params }) =>
      CurrentCaller.use((caller) => Effect.map(Payouts.cancel(caller, params.id), Transactions.toWire)).pipe(Effect.map(mutable))))

const RfisLive = group(ServerApi, "rfis", (handlers) =>
  handlers
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Effect.map(Rfis.get(caller, params.id), Rfis.toWire)).pipe(Effect.map(mutable)))
    .handle("respond", ({ params, payload }) =>
      CurrentCaller.use((caller) => Effect.map(Rfis.respond(caller, params.id, payload), Rfis.toWire)).pipe(Effect.map(mutable))))

const listQueryOf = (query: {
  readonly cursor?: string
  readonly limit?: number
  readonly direction?: "forward" | "backward"
  readonly sortBy?: string
  readonly sortOrder?: "asc" | "desc"
}) => ({
  cursor: query.cursor,
  limit: query.limit ?? defaultPageSize,
  direction: query.direction ?? "forward",
  sortBy: query.sortBy ?? "createdAt",
  sortOrder: query.sortOrder ?? "desc"
})

const mutable = <A>(value: A) => value as { -readonly [K in keyof A]: A[K] }

const WebhooksLive = group(ServerApi, "webhooks", (handlers) =>
  handlers
    .handle("createEndpoint", ({ payload }) =>
      CurrentCaller.use((caller) => Endpoints.create(caller, payload)).pipe(Effect.map(mutable)))
    .handle("listEndpoints", ({ query }) =>
      CurrentCaller.use((caller) => Endpoints.list(caller, listQueryOf(query))).pipe(Effect.map((p) => ({ data: [...p.data], meta: p.meta }))))
    .handle("getEndpoint", ({ params }) => CurrentCaller.use((caller) => Endpoints.get(caller, params.id)))
    .handle("updateEndpoint", ({ params, payload }) => CurrentCaller.use((caller) => Endpoints.update(caller, params.id, payload)))
    .handle("deleteEndpoint", ({ params }) => CurrentCaller.use((caller) => Endpoints.deleteEndpoint(caller, params.id)))
    .handle("rotateSecret", ({ params }) => CurrentCaller.use((caller) => Endpoints.rotateSecret(caller, params.id)))
    .handle("listDeliveries", ({ query }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const status = query.status?.toLowerCase()
        if (status !== undefined && !(DeliveryStatuses as ReadonlyArray<string>).includes(status)) {
          return yield* Problem.invalidRequest([{ pointer: "/status", detail: `must be one of: ${DeliveryStatuses.join(", ")}` }], "query")
        }
        const page = yield* Deliveries.list(caller, {
          endpointId: query.endpointId,
          status: status as DeliveryStatus | undefined,
          eventType: query.eventType
        }, listQueryOf(query))
        return { data: [...page.data], meta: page.meta }
      }))
    .handle("getDelivery", ({ params }) =>
      CurrentCaller.use((caller) => Deliveries.get(caller, params.id)).pipe(Effect.map((d) => ({ ...d, attemptList: [...d.attemptList] }))))
    .handle("retryDelivery", ({ params }) => CurrentCaller.use((caller) => Deliveries.retry(caller, params.id)))
    .handle("eventTypes", () =>
      Effect.succeed(wholeList(EventTypes.map((type) => ({
        type,
        deprecated: DeprecatedEventTypes.has(type),
        example: { id: "evt_example", type, createdAt: "2026-01-01T00:00:00.000Z", apiVersion: "2", mode: "sandbox", data: EventExamples[type] }
      }))))))

const DocumentsLive = group(ServerApi, "documents", (handlers) =>
  handlers
    // The gate has read and parsed the form (CurrentUpload); the declared payload stream is never pulled.
    .handle("upload", () =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const form = yield* CurrentUpload
        if (form === undefined) return yield* Effect.die(new Error("upload endpoint without a parsed form"))
        return yield* Documents.upload(caller, form)
      }))
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Effect.map(Documents.get(caller, params.id), Documents.toWire))))

const OnboardingLive = group(ServerApi, "onboarding", (handlers) =>
  handlers
    .handle("requirements", ({ query }) =>
      Effect.gen(function*() {
        const requirements = Requirements.CountryRequirementSets[query.country]
        if (requirements === undefined) {
          return yield* Problem.apiError(
            "APPLICATION_COUNTRY_NOT_SUPPORTED",
            `Onboarding is not offered in ${query.country}; it is offered in ${Object.keys(Requirements.CountryRequirementSets).join(", ")}.`
          )
        }
        return {
          country: requirements.country,
          legalStructures: requirements.legalStructures.map(mutable),
          classifications: { primaryIndustry: Requirements.selectableIndustries.map((k) => ({ key: k.key, label: k.label })) },
          business: { fields: requirements.business.map(mutable), documents: requirements.documents.map(mutable) },
          persons: {
            ownerThresholdPercent: requirements.persons.ownerThresholdPercent,
            minimumControllers: requirements.persons.minimumControllers,
            fields: requirements.persons.fields.map(mutable),
            documents: requirements.persons.documents.map((d) => ({ ...d, acceptedTypes: [...d.acceptedTypes] }))
          },
          individual: {
            fields: requirements.individual.fields.map(mutable),
            documents: requirements.individual.documents.map((d) => ({ ...d, acceptedTypes: [...d.acceptedTypes] }))
          }
        }
      }))
    .handle("submit", ({ payload }) => CurrentCaller.use((caller) => Submissions.submitOnboarding(caller, payload)).pipe(Effect.map(mutable)))
    .handle("submitOrganization", ({ payload }) =>
      CurrentCaller.use((caller) => Submissions.submitOrganizationOnboarding(caller, payload)).pipe(Effect.map(mutable))))

const ApplicationsLive = group(ServerApi, "applications", (handlers) =>
  handlers
    .handle("list", ({ query }) =>
      CurrentCaller.use((caller) => Applications.list(caller, listQueryOf(query), query.applicationType)).pipe(
        Effect.map((p) => ({ data: p.data.map(mutable), meta: p.meta }))
      ))
    .handle("get", ({ params }) => CurrentCaller.use((caller) => Applications.get(caller, params.id)).pipe(Effect.map((a) => mutable(Applications.toWire(a)))))
    .handle("cancel", ({ params }) => CurrentCaller.use((caller) => Cancellation.requestCancel(caller, params.id)).pipe(Effect.map(mutable)))
    .handle("idvLink", ({ params }) => CurrentCaller.use((caller) => IdvLinks.create(caller, params.id, params.referenceId)))
    .handle("personField", ({ params }) =>
      CurrentCaller.use((caller) => Applications.readPersonField(caller, params.id, params.referenceId, params.field))))

export const layerHandlers = Layer.mergeAll(
  PortalLive,
  CustomersLive,
  WebhooksLive,
  SimulateLive,
  DocumentsLive,
  OnboardingLive,
  ApplicationsLive,
  TransactionsLive,
  WalletsLive,
  SignersLive,
  QuotesLive,
  OrdersLive,
  RecipientsLive,
  PayoutsLive,
  RfisLive,
  FaultsLive,
  OutcomesLive,
  ListenersLive,
  InspectLive
)
