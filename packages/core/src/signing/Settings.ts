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
  /** Where the signer-facing links point. */
  signingOrigin: "https://sign.fos.dev"
} as const
