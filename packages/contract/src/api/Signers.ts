import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { CustomerId, WalletSignerId } from "../kernel/Ids.ts"
import {
  AdminApproval,
  CeremonyStart,
  ClaimAccepted,
  ClaimNonCustodial,
  SignerHeaders,
  SignerSessionInfo,
  SigningRequest,
  SigningRequestId,
  WalletCeremony
} from "../signing/Signers.ts"
import { common, Idempotency, problem, withBody } from "./Policies.ts"
import { documented } from "./OpenApiDocument.ts"

/**
 * Non-custodial wallets: the claim and the admin-approval link (the spec's rows), and the signer's own endpoints,
 * which take the signer's session in `Authorization: Bearer` beside the organization's key (Authentication rule 10).
 */
export const Signers = HttpApiGroup.make("signers")
  .add(
    HttpApiEndpoint.post("claim", "/v2/customers/:customerId/wallets/claim-non-custodial", {
      params: { customerId: CustomerId },
      payload: ClaimNonCustodial,
      success: ClaimAccepted.pipe(HttpApiSchema.status(202)),
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Claim a wallet", "Starts a customer's claim of a wallet: enrolls its signers so the customer can co-sign its transfers.")).annotate(Idempotency, "required")
  )
  .add(
    HttpApiEndpoint.post("reissueAdminApproval", "/v2/customers/:customerId/wallet-signers/:signerId/reissue-admin-approval", {
      params: { customerId: CustomerId, signerId: WalletSignerId },
      success: AdminApproval,
      error: [...withBody, problem(422)]
    }).annotateMerge(documented("Reissue an admin approval", "Issues a new admin approval link for a wallet signer whose earlier one expired."))
  )
  .add(HttpApiEndpoint.get("session", "/v2/signer/session", {
    headers: SignerHeaders,
    success: SignerSessionInfo,
    error: common
  }).annotateMerge(documented("Get the signer session", "Reads the wallet signer the bearer session belongs to, and when the session expires.")))
  .add(HttpApiEndpoint.post("startCeremony", "/v2/signer/ceremonies", {
    headers: SignerHeaders,
    payload: CeremonyStart,
    success: WalletCeremony.pipe(HttpApiSchema.status(201)),
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Start a wallet ceremony", "Starts a signer ceremony (enrollment, promotion, recovery) for the session's signer; wallet_ceremony.* events report it.")))
  // A machine signer's signing requests: the request's details with the organization's key; approving (its stamp)
  // and rejecting (its decline) with the machine signer's session too (docs/signing.md, "The outside actors").
  .add(HttpApiEndpoint.get("signingRequest", "/v2/signing-requests/:id", {
    params: { id: SigningRequestId },
    success: SigningRequest,
    error: common
  }).annotateMerge(documented("Get a signing request", "Reads a request for a signer's signature on a transaction: what is signed, by whom, and until when.")))
  .add(HttpApiEndpoint.post("approveSigningRequest", "/v2/signing-requests/:id/approve", {
    params: { id: SigningRequestId },
    headers: SignerHeaders,
    success: SigningRequest,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Approve a signing request", "Signs a transaction with the session's signer; the transaction moves on once its quorum is met.")))
  .add(HttpApiEndpoint.post("rejectSigningRequest", "/v2/signing-requests/:id/reject", {
    params: { id: SigningRequestId },
    headers: SignerHeaders,
    success: SigningRequest,
    error: [...withBody, problem(422)]
  }).annotateMerge(documented("Reject a signing request", "Refuses to sign a transaction; the transaction is rejected and nothing moves.")))
