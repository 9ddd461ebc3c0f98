/**
 * The durations of non-custodial wallets that the spec leaves "not shown", in one place (docs/signing.md lists
 * them). Every one is a durable timer or a check on the engine's clock, so the virtual clock jumps over them.
 */
export const signingSettings = {
  /** How long the wallet provider takes to provision a claim's wallets when no simulate call answers first. */
  provisioningMs: 30_000,
  /** How long a signer's invitation (its `verificationUrl`) can be used to enroll. */
  invitationTtlMs: 7 * 24 * 3600_000,
  /** How long a ceremony (or an additional passkey) waits for an admin's co-stamp before it fails. */
  ceremonyTtlMs: 24 * 3600_000,
  /** How long a signer session token is accepted after the signer logs in. */
  sessionTtlMs: 15 * 60_000,
  /**
   * Until when the deprecated transaction.awaiting_user_signature is sent beside each transaction.awaiting_signature
   * (spec, Versioning 5: "delivered during a compatibility window"); `SigningMachine.withDeprecatedEvents` reads it.
   */
  awaitingUserSignatureUntilMs: Date.UTC(2027, 6, 1),
  /** How many signing windows a transfer gets before it fails user_signature_expired. */
  signingAttempts: 3,
  /**
   * How long one signing window (one attempt, its `expiresAt`) waits for the roster's quorum before the next attempt
   * opens (a durable timer): three windows of 15 minutes give a transfer 45 minutes at most.
   */
  signingWindowMs: 15 * 60_000,
  /**
   * How long a transfer waits in its wallet's signing queue before it fails user_signature_timeout (a durable timer
   * from its entry into the queue). Shorter than a holder's three windows, so a queue behind a roster that does not
   * sign does not wait for ever.
   */
  queueWaitMs: 30 * 60_000,
  /** Where the signer-facing links point. */
  signingOrigin: "https://sign.fos.dev"
} as const
