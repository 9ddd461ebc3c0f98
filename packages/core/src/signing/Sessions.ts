/**
 * Signer sessions (spec, Authentication rule 10): "Signer endpoints use a signer session token in Authorization:
 * Bearer <SIGNER_SESSION_TOKEN>; a missing, malformed, badly signed or expired token returns 401
 * SIGNER_SESSION_INVALID; a failed passkey authentication returns 401 SIGNER_AUTH_FAILED. How a signer session
 * token is issued: not shown."
 *
 * fos's design (docs/signing.md):
 * - A token is issued when the signer authenticates with its credential; in the sandbox that is the simulate login
 *   (`POST /sandbox/v2/simulate/wallet-signers/{signerId}/sessions`), whose failed authentication is 401
 *   SIGNER_AUTH_FAILED. A signer that holds no credential yet (pending_activation) or was removed cannot log in.
 * - The token is `fss.<walletSignerId>.<organizationId>.<environment>.<expiresAtMs>.<hmac>`: HMAC-SHA256 (noble) of
 *   everything before the last dot, keyed with the engine's session key. The key is 32 random bytes kept in the
 *   store, made on first use, so every process over one store checks the same tokens and a restart keeps them.
 * - It expires `sessionTtlMs` after issue on the engine's clock (so an advance of the virtual clock expires it), and
 *   it is accepted only in its organization and environment, and only while its signer can still act: a removed
 *   signer's sessions end with it, and so do those of a roster whose claim failed.
 */
import { type CustomerId, type Environment, toIso, type WalletSignerId } from "@fos/contract"
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, hexToBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Effect } from "effect"
import type * as Auth from "../tenancy/Auth.ts"
import * as Domain from "../kernel/Domain.ts"
import * as IdGenerator from "../kernel/IdGenerator.ts"
import * as Problem from "../kernel/Problem.ts"
import * as Roster from "./Roster.ts"
import * as Settings from "./Settings.ts"
import * as SignerMachine from "./SignerMachine.ts"
import * as Store from "../kernel/Store.ts"

export interface SessionKey {
  readonly id: string
  readonly keyHex: string
}

const SessionKeys = Store.table<SessionKey>({ name: "signer_session_keys", key: (k) => k.id })

/** The engine's session key belongs to no organization: a reset keeps it, and no snapshot holds it. */
export const domain = Domain.make({ name: "signing/Sessions", keptTables: [SessionKeys] })

const keyId = "signer-sessions"

/** The engine's session key: read, or made once (two processes racing to make it both end with the first's). */
const sessionKey: Effect.Effect<Uint8Array, never, Store.Store> = Effect.gen(function*() {
  const store = yield* Store.Store
  const existing = yield* store.get(SessionKeys, keyId)
  if (existing !== undefined) return hexToBytes(existing.keyHex)
  const made: SessionKey = { id: keyId, keyHex: yield* IdGenerator.randomHex(64) }
  const inserted = yield* Effect.exit(store.insert(SessionKeys, made))
  if (inserted._tag === "Success") return hexToBytes(made.keyHex)
  const winner = yield* store.get(SessionKeys, keyId)
  return hexToBytes((winner ?? made).keyHex)
})

const prefix = "fss"

const sign = (key: Uint8Array, body: string): string => bytesToHex(hmac(sha256, key, utf8ToBytes(body)))

/** Compares two hex digests in time that does not depend on where they differ. */
const sameDigest = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

export interface IssuedSession {
  readonly token: string
  readonly walletSignerId: WalletSignerId
  readonly customerId: CustomerId
  readonly expiresAt: string
}

/** A session for `signer`, which has just authenticated. */
export const issue = (signer: Roster.StoredSigner): Effect.Effect<IssuedSession, never, Store.Store> =>
  Effect.gen(function*() {
    const key = yield* sessionKey
    const expiresAtMs = (yield* Clock.currentTimeMillis) + Settings.signingSettings.sessionTtlMs
    const body = [prefix, signer.id, signer.organizationId, signer.environment, String(expiresAtMs)].join(".")
    return { token: `${body}.${sign(key, body)}`, walletSignerId: signer.id, customerId: signer.customerId, expiresAt: toIso(expiresAtMs) }
  })

const invalid = (detail: string) => Problem.apiError("SIGNER_SESSION_INVALID", detail)

const tokenPattern = /^fss\.(wsg_[0-9A-Za-z]{1,64})\.(org_[0-9A-Za-z]{1,64})\.(sandbox|live)\.(\d{13,15})\.([0-9a-f]{64})$/

/**
 * The signer whose session `authorization` (the header's value) carries, checked for the caller's organization and
 * environment; 401 SIGNER_SESSION_INVALID for anything else.
 */
export const signerOf = (
  caller: Auth.Caller,
  authorization: string | undefined
): Effect.Effect<{ readonly signer: Roster.StoredSigner; readonly expiresAt: string }, Problem.ApiError, Store.Store> =>
  Effect.gen(function*() {
    if (authorization === undefined || authorization.trim() === "") {
      return yield* invalid("Send the signer's session token as Authorization: Bearer <token>.")
    }
    const match = /^Bearer +(\S+)$/i.exec(authorization.trim())
    const parts = match === null ? null : tokenPattern.exec(match[1]!)
    if (match === null || parts === null) return yield* invalid("The Authorization header does not carry a signer session token.")
    const token = match[1]!
    const body = token.slice(0, token.lastIndexOf("."))
    if (!sameDigest(sign(yield* sessionKey, body), parts[5]!)) return yield* invalid("The signer session token's signature does not verify.")
    const expiresAtMs = Number(parts[4])
    if (expiresAtMs <= (yield* Clock.currentTimeMillis)) return yield* invalid("The signer session has expired; log the signer in again.")
    const environment = parts[3] as Environment
    if (parts[2] !== caller.organization.id || environment !== caller.environment) {
      return yield* invalid("The signer session belongs to another organization or environment.")
    }
    const store = yield* Store.Store
    const signer = yield* store.get(Roster.WalletSigners, parts[1]!)
    const claim = signer === undefined ? undefined : yield* store.get(Roster.Claims, signer.claimId)
    if (signer === undefined || !SignerMachine.isActive(signer.status) || claim === undefined || claim.status === "failed") {
      return yield* invalid("The signer of this session can no longer act.")
    }
    return { signer, expiresAt: toIso(expiresAtMs) }
  })
