/**
 * The errors of the API: the catalog of every synchronous error code of the spec ("Errors" → "Synchronous codes"): one typed value per
 * code with its HTTP status, title and resolution. Clients match on `type`; the title may change, the code never.
 *
 * Two statuses the spec leaves open are fixed here (docs/decisions.md):
 * - FILE_TOO_LARGE is 413, since it replaces PAYLOAD_TOO_LARGE for uploads;
 * - IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS is 409, a conflict with a request still running.
 */

/** One entry of the catalog. */
export interface ErrorSpec {
  readonly status: number
  readonly title: string
  readonly resolution: string
}

const e = (status: number, title: string, resolution: string): ErrorSpec => ({ status, title, resolution })

const retry = "Retry with exponential backoff; give the correlationId to support if it persists."

export const ErrorCatalog = {
  // 400
  VALIDATION_ERROR: e(400, "Validation failed", "Correct the fields listed in errors[] and send the request again."),
  MALFORMED_JSON: e(400, "Malformed JSON", "Send a syntactically valid JSON body."),
  BAD_REQUEST: e(400, "Bad request", "Check the request line, headers and required parameters."),
  INVALID_OID_FORMAT: e(400, "Invalid identifier", "Use an identifier of the form <prefix>_<opaque> with the prefix this parameter expects."),
  INVALID_CURSOR: e(400, "Invalid cursor", "Use a cursor from the previous page of the same sort, or omit it to start again."),
  INVALID_ADDRESS_FORMAT: e(400, "Invalid address format", "Send the EVM address all-lowercase or with a correct EIP-55 checksum."),
  IDEMPOTENCY_KEY_REQUIRED: e(400, "Idempotency-Key required", "Send a unique Idempotency-Key header with this request."),
  INVALID_LEGAL_STRUCTURE: e(400, "Invalid legal structure", "Use one of the legalStructure values offered for the country by GET /v2/onboarding/requirements."),
  INVALID_POLICY_SUBJECT: e(400, "Invalid classification key", "Use a selectable classification key from GET /v2/onboarding/requirements."),
  DOCUMENT_IDS_NOT_FOUND: e(400, "Documents not found", "Upload the documents listed in errors[] for this customer and reference their ids."),
  // 401
  API_KEY_MISSING: e(401, "API key missing", "Send your API key in the x-api-key header."),
  API_KEY_INVALID: e(401, "API key invalid", "Use an active key of this environment (ck_sandbox_ on sandbox, ck_live_ on production)."),
  UNAUTHORIZED: e(401, "Unauthorized", "Authenticate and send the request again."),
  SIGNER_SESSION_INVALID: e(401, "Signer session invalid", "Obtain a fresh signer session token and send it as Authorization: Bearer."),
  SIGNER_AUTH_FAILED: e(401, "Signer authentication failed", "Repeat the passkey authentication."),
  // 403
  FEATURE_NOT_ENABLED: e(403, "Feature not enabled", "Ask support to enable the feature for your organization."),
  API_KEY_CREATION_DISABLED: e(403, "API key creation disabled", "Ask support to enable key creation for your organization."),
  API_KEY_READ_ONLY: e(403, "API key is read-only", "Use a read-write key for methods other than GET, HEAD and OPTIONS."),
  API_KEY_IP_NOT_ALLOWED: e(403, "IP address not allowed", "Call from an address in the key's IP allowlist, or update the allowlist."),
  API_KEY_WRITE_REQUIRES_ADMIN: e(403, "Read-write keys need an admin", "Ask an organization admin to create the read-write key, or create a read-only key."),
  INSUFFICIENT_ROLE: e(403, "Insufficient role", "Ask an organization admin to perform this action."),
  STEP_UP_REQUIRED: e(403, "Step-up verification required", "Complete a fresh multi-factor verification and retry."),
  EMAIL_NOT_VERIFIED: e(403, "Email not verified", "Verify your email address and retry."),
  ORGANIZATION_ACCESS_SUSPENDED: e(403, "Organization access suspended", "Contact support; keys and users of a suspended organization are refused."),
  PRODUCTION_ACCESS_REQUIRED: e(403, "Production access required", "Complete organization onboarding; production opens once the organization is approved and active."),
  FORBIDDEN: e(403, "Forbidden", "This credential may not perform this action."),
  CLIENT_MARKUP_NOT_ENABLED: e(403, "Client markup not enabled", "Remove markupBps and markupAmount, or ask support to enable client markup."),
  // 404
  NOT_FOUND: e(404, "Not found", "Check the path and the identifier."),
  CUSTOMER_NOT_FOUND: e(404, "Customer not found", "Check the customer id; it must belong to your organization."),
  INDIVIDUAL_NOT_FOUND: e(404, "Individual not found", "Check the individual id; it must belong to your organization."),
  APPLICATION_NOT_FOUND: e(404, "Application not found", "Check the application id; it must belong to your organization."),
  APPLICATION_PERSON_NOT_FOUND: e(404, "Application person not found", "Check the person's referenceId on the application."),
  ORDER_NOT_FOUND: e(404, "Order not found", "Check the order id; it must belong to your organization."),
  QUOTE_NOT_FOUND: e(404, "Quote not found", "Check the quote option id; it must belong to your organization."),
  USER_NOT_FOUND: e(404, "User not found", "Check the user id; it must belong to your organization."),
  WALLET_NOT_FOUND: e(404, "Wallet not found", "Check the wallet id; it must belong to your organization."),
  VIRTUAL_ACCOUNT_NOT_FOUND: e(404, "Virtual account not found", "Check the virtual account id; it must belong to your organization."),
  WEBHOOK_ENDPOINT_NOT_FOUND: e(404, "Webhook endpoint not found", "Check the endpoint id; it must belong to your organization."),
  COSIGN_ACTIVITY_NOT_FOUND: e(404, "Cosign activity not found", "Check the signing activity id."),
  APPLICATION_PERSON_FIELD_EMPTY: e(404, "Person field empty", "The person exists but this field has no value yet."),
  NO_PRICING_CONFIGURED: e(404, "No pricing configured", "This asset pair has no pricing rule; choose a supported pair."),
  // 409
  LAST_ORG_ADMIN: e(409, "Last organization admin", "Promote another admin before removing or demoting this one."),
  CANNOT_REMOVE_SELF: e(409, "Cannot remove yourself", "Ask another admin to remove this user."),
  CONFLICT: e(409, "Conflict", "Read the resource's current state and retry if still appropriate."),
  DUPLICATE_CLIENT_REFERENCE_ID: e(409, "Duplicate client reference id", "Use a clientReferenceId not used before for this resource type."),
  APPLICATION_INVALID_STATUS: e(409, "Application status does not allow this", "Read the application; this action is not available in its current status."),
  APPLICATION_ALREADY_DECIDED: e(409, "Application already decided", "Approved and rejected applications are final; submit a new application."),
  APPLICATION_COUNTRY_NOT_SUPPORTED: e(409, "Country not supported", "Choose a country listed by GET /v2/onboarding/requirements."),
  CANCEL_IN_PROGRESS: e(409, "Cancel in progress", "Another review action is active; wait for it and read the application."),
  HOUSE_ACCOUNT_BUSINESS_ONLY: e(409, "House account must be a business", "Mark only business customers as the house account."),
  SANDBOX_HOUSE_ACCOUNT_RESERVED_REFERENCE: e(409, "Reserved house-account reference", "Use another clientReferenceId; this one is reserved for the sandbox house account."),
  ORDER_NOT_EXECUTABLE: e(409, "Order not executable", "Only a pending order can be executed; read the order."),
  ORDER_EXPIRED: e(409, "Order expired", "Create a new order; this one passed lockExpiresAt."),
  ORDER_NOT_CANCELLABLE: e(409, "Order not cancellable", "Succeeded and failed orders cannot be cancelled."),
  ORDER_CANCEL_IN_PROGRESS: e(409, "Order cancel in progress", "Retry shortly or read the order."),
  QUOTE_EXPIRED: e(409, "Quote expired", "Request a new quote."),
  QUOTE_ALREADY_USED: e(409, "Quote already used", "A quote option is single-use; request a new quote."),
  USER_ALREADY_EXISTS: e(409, "User already exists", "Use the existing user."),
  USER_ALREADY_BELONGS_TO_ORG: e(409, "User already belongs to an organization", "A user belongs to one organization."),
  WALLET_NOT_ROTATABLE: e(409, "Wallet not rotatable", "Only an active wallet can be rotated."),
  WALLET_ROTATION_IN_PROGRESS: e(409, "Wallet rotation in progress", "Wait for the running rotation to finish."),
  RESOURCE_TERMINAL: e(409, "Resource is terminal", "The entity already reached a terminal state; nothing more can be simulated."),
  IDEMPOTENCY_KEY_CONFLICT: e(409, "Idempotency key conflict", "This key was used with a different body; use a fresh key for a different request."),
  IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS: e(409, "Request with this key in progress", "A request with this key is still running; retry after it finishes."),
  SANDBOX_NOT_PROVISIONED: e(409, "Sandbox not provisioned", "Retry later; do not rotate the key."),
  // 410, 412, 413, 415
  GONE: e(410, "Gone", "The resource was permanently removed."),
  PRECONDITION_FAILED: e(412, "Precondition failed", "Read the resource again and retry with current preconditions."),
  PAYLOAD_TOO_LARGE: e(413, "Payload too large", "Send a smaller request body."),
  FILE_TOO_LARGE: e(413, "File too large", "Upload a file within the documented size limit."),
  UNSUPPORTED_MEDIA_TYPE: e(415, "Unsupported media type", "Send Content-Type: application/json (multipart/form-data for uploads)."),
  // 422
  UNPROCESSABLE_ENTITY: e(422, "Unprocessable entity", "The request breaks a business rule; see detail."),
  ONBOARDING_NOT_READY: e(422, "Onboarding not ready", "Complete the items listed in errors[] and submit again."),
  CUSTOMER_NOT_ONBOARDED: e(422, "Customer not onboarded", "Wait until the customer's onboarding application is approved."),
  SIGNATURE_REJECTED: e(422, "Signature rejected", "The signing provider rejected the stamped request; the session is still valid, sign again."),
  INSUFFICIENT_FUNDS: e(422, "Insufficient funds", "Fund the source, then retry."),
  REJECTION_CATEGORY_NOT_APPLICABLE: e(422, "Rejection category not applicable", "Send category only for KYB applications."),
  UNSUPPORTED_PAIR: e(422, "Unsupported pair", "Choose a supported source and destination asset pair."),
  INVALID_ORDER_COMBO: e(422, "Invalid order combination", "Check source, destination and autoPayout for a consistent combination."),
  NON_CUSTODIAL_SOURCE_NOT_SUPPORTED: e(422, "Non-custodial source not supported", "Use a custodial source on this chain."),
  MISSING_REQUIRED_FIELDS: e(422, "Missing required fields", "Add the fields named in detail."),
  RECIPIENT_VALIDATION_FAILED: e(422, "Recipient validation failed", "Correct the recipient details."),
  AMOUNT_OUT_OF_RANGE: e(422, "Amount out of range", "Send an amount within the allowed range that does not round to zero."),
  CLIENT_MARKUP_SPREAD_EXCEEDED: e(422, "Client markup spread exceeded", "Lower the declared margin."),
  CLIENT_MARKUP_EXCEEDS_PAYOUT: e(422, "Client markup exceeds payout", "Lower the autoPayout margin below the converted amount."),
  PROVIDER_REJECTED: e(422, "Provider rejected", "Adjust the inputs; the provider refused the transfer or conversion."),
  CANCELLED: e(422, "Cancelled", "The conversion was cancelled and no funds moved."),
  QUOTE_ASSET_MISMATCH: e(422, "Quote asset mismatch", "Use a quote option priced for this order's assets."),
  QUOTE_RECIPIENT_TYPE_UNPRICED: e(422, "Quote recipient type unpriced", "Request a quote for this recipient type."),
  INVALID_TRANSFER_PAIR: e(422, "Invalid transfer pair", "Use two different active wallets of the same customer on the same chain."),
  WALLET_NOT_ACTIVE: e(422, "Wallet not active", "Use an active wallet."),
  WALLET_ROTATION_BLOCKED_BALANCE: e(422, "Wallet rotation blocked by balance", "Move the balance above the dust floor out first."),
  WALLET_ROTATION_BLOCKED_RETURN: e(422, "Wallet rotation blocked by a return", "Wait for the pending unsupported-coin return to finish."),
  WALLET_NO_ADDRESS: e(422, "Wallet has no address", "Wait until the wallet has an address."),
  NO_ELIGIBLE_PROVIDER: e(422, "No eligible provider", "No provider can serve this request for the customer."),
  VIRTUAL_ACCOUNT_NOT_ACTIVE: e(422, "Virtual account not active", "Wait for virtual_account.activated."),
  VIRTUAL_ACCOUNT_ASSET_MISMATCH: e(422, "Virtual account asset mismatch", "Use a virtual account in the asset of this request."),
  SANDBOX_TRANSACTION_NOT_FORCE_TERMINAL_READY: e(422, "Transaction not ready for this outcome", "Simulate an outcome that is viable in the transaction's current phase."),
  WEBHOOK_DELIVERY_NOT_RETRYABLE: e(422, "Delivery not retryable", "Only a failed delivery can be retried."),
  // 429
  RATE_LIMITED: e(429, "Rate limited", "Wait retryAfterSeconds (the Retry-After header) before sending more requests."),
  VERIFICATION_EMAIL_RESEND_RATE_LIMITED: e(429, "Verification email rate limited", "Wait retryAfterSeconds; one email per minute and five per 24 hours are allowed."),
  // 5xx
  INTERNAL_ERROR: e(500, "Internal error", retry),
  BAD_GATEWAY: e(502, "Bad gateway", retry),
  SIGNING_PROVIDER_UNAVAILABLE: e(502, "Signing provider unavailable", "Retry; the signer session is still valid."),
  SERVICE_UNAVAILABLE: e(503, "Service unavailable", retry),
  POLICY_EVALUATION_UNAVAILABLE: e(503, "Policy evaluation unavailable", retry),
  RATE_UNAVAILABLE: e(503, "Rate unavailable", retry),
  RATE_UNAVAILABLE_AFTER_HOURS: e(503, "Rate unavailable after hours", "The market is closed and no prior rate exists; retry when it opens, after the seconds Retry-After gives."),
  PROVIDER_UNAVAILABLE: e(503, "Provider unavailable", "No funds moved; retry with backoff.")
} as const satisfies Record<string, ErrorSpec>

/** A stable error `type` code. */
export type ErrorCode = keyof typeof ErrorCatalog

/** Where the server serves the error reference (ErrorReference.ts, generated from this catalog). */
export const errorReferencePath = "/docs/errors"

/**
 * The path and fragment of a problem's `docs`: the code's entry on the error reference the server itself serves,
 * `/docs/errors#<code in lower case>`. A problem carries it as an absolute URL on the request's own origin
 * (`Problem.render`; docs/decisions.md, "Problems").
 */
export const docsUrl = (code: ErrorCode): string => `${errorReferencePath}#${code.toLowerCase()}`

export const isErrorCode = (s: string): s is ErrorCode => Object.hasOwn(ErrorCatalog, s)
