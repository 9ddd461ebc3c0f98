/**
 * Identity-verification links: `POST /v2/applications/{id}/persons/{referenceId}/idv-link` gives a fresh link for a
 * person whose verification is in progress, and emits idv_link.created (the spec's events: "url (resumable bearer
 * secret, do not log), shortUrl (deprecated, one-time, works about five minutes after first open)").
 *
 * A link is offered only while the application is open (ApplicationMachine.ts, IssueIdvLink) and the person's
 * verification in progress: CANCEL_IN_PROGRESS while a cancel runs, APPLICATION_INVALID_STATUS otherwise, decided
 * applications included (their persons' verification is over). The spec does not say how long a link lives; fos
 * gives it seven days (docs/onboarding.md).
 */
import { Clock, Effect } from "effect"
import { type ApplicationId, toIso } from "@fos/contract"
import * as ApplicationMachine from "./ApplicationMachine.ts"
import * as Applications from "./Applications.ts"
import type * as Auth from "../tenancy/Auth.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Outbox from "../kernel/Outbox.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Wire from "../kernel/Wire.ts"

/** Links live this long; a fresh one can be fetched while verification is in progress. */
const idvLinkLifetimeMs = 7 * 24 * 60 * 60_000

/**
 * `POST /v2/applications/{id}/persons/{referenceId}/idv-link`: a fresh identity-verification link, while the
 * person's verification is in progress; emits idv_link.created (url, and the deprecated shortUrl). Its refusals come
 * in a fixed order, existence before state (docs/onboarding.md, "The order of the other writes' refusals"); a request
 * that breaks two rules gets the first:
 * 1. existence: the application (404 APPLICATION_NOT_FOUND), then its person (404 APPLICATION_PERSON_NOT_FOUND);
 * 2. state: a cancel running (409 CANCEL_IN_PROGRESS), else the application not open or the person's verification
 *    not in progress (409 APPLICATION_INVALID_STATUS).
 */
export const create = (caller: Auth.Caller, id: ApplicationId, referenceId: string) =>
  Effect.gen(function*() {
    const application = yield* Applications.get(caller, id, true)
    const person = yield* Applications.findPerson(application, referenceId)
    const outcome = ApplicationMachine.transition(Applications.machineState(application), { _tag: "IssueIdvLink" })
    if ("refused" in outcome && outcome.refused === "CANCEL_IN_PROGRESS") {
      return yield* Problem.apiError("CANCEL_IN_PROGRESS", "A cancellation of this application is in progress.")
    }
    if ("refused" in outcome || person.verificationStatus !== "in_progress") {
      return yield* Problem.apiError("APPLICATION_INVALID_STATUS", "Identity verification is not in progress for this person; a link is offered only while it is.")
    }
    const nowMs = yield* Clock.currentTimeMillis
    const url = `https://verify.fos.dev/session/${yield* IdGenerator.randomHex(32)}`
    const shortUrl = `https://fos.dev/v/${yield* IdGenerator.randomHex(8)}`
    const customerId = application.type === "organization_onboarding" ? undefined : application.customerId
    yield* Outbox.emitEvent({
      type: "idv_link.created",
      organizationId: application.organizationId,
      environment: application.environment,
      data: Wire.toWire({ applicationId: application.id, referenceId, customerId, url, shortUrl, occurredAt: toIso(nowMs) })
    })
    return Wire.toWire({ applicationId: application.id, referenceId, url, shortUrl, expiresAt: toIso(nowMs + idvLinkLifetimeMs) }) as {
      readonly applicationId: string
      readonly referenceId: string
      readonly url: string
      readonly shortUrl: string
      readonly expiresAt: string
    }
  })
