/**
 * The world model's review rules: how applications move on by themselves, on the clock, when no simulate call
 * decides them. Configurable per engine (`EngineOptions.review`); docs/onboarding.md documents the defaults.
 */
import { Context } from "effect"
import type { ApplicationType } from "@fos/contract"

/**
 * How applications move on by themselves. Each submitted application is reviewed `reviewDelayMs[type]` after
 * submission; the review looks for a marker in the applicant's legal or personal name or in clientReferenceId:
 * `fos:manual` leaves it open for a simulate decision, `fos:reject` rejects it (compliance_denied),
 * `fos:late-reject` rejects it (rejected_by_ops) and a late compliance result corrects that
 * `lateComplianceDelayMs` later; anything else is approved.
 */
export interface ReviewSettingsValue {
  readonly automatic: boolean
  readonly reviewDelayMs: Readonly<Record<ApplicationType, number>>
  readonly cancelDelayMs: number
  readonly lateComplianceDelayMs: number
  readonly virtualAccountActivationMs: number
}

export const defaultReviewSettings: ReviewSettingsValue = {
  automatic: true,
  reviewDelayMs: {
    customer_onboarding: 5 * 60_000,
    customer_update: 2 * 60_000,
    virtual_account: 60_000,
    crypto_wallet: 60_000,
    organization_onboarding: 60 * 60_000
  },
  cancelDelayMs: 30_000,
  lateComplianceDelayMs: 60 * 60_000,
  virtualAccountActivationMs: 30_000
}

export class ReviewSettings extends Context.Reference<ReviewSettingsValue>("fos/ReviewSettings", {
  defaultValue: () => defaultReviewSettings
}) {}

