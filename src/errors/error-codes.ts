/**
 * Every error code the service answers with, its HTTP status and what it means. The /docs/errors
 * page is rendered from this list, and every Error envelope's doc_url points into it.
 */
export const ERROR_CODES = {
  unauthenticated: { status: 401, description: 'No X-API-Key header, or the key is unknown or revoked.' },
  not_found: { status: 404, description: 'The tenant is not visible to this key (or does not exist), or the record or route is unknown.' },
  grant_missing: { status: 403, description: 'The MSP has not granted the permission this operation needs; the missing grant key is in `needed` and `details.needed`.' },
  role_required: { status: 403, description: 'The operation needs the other kind of key: an MSP key (sk_msp_...) for grants, charges and identity decisions, an ISV key for ISV writes; `details.role` names it.' },
  psa_company_create_refused: { status: 403, description: 'Company create was refused by policy while the grant is on.' },
  validation: { status: 422, description: 'A field fails the target vendor\'s rules, or names an unknown board, status, priority or member id, or an unsupported routing target. Nothing was written.' },
  request_invalid: { status: 422, description: 'The request does not fit the operation\'s schema (a wrong type, a missing field, an undeclared property: REST answers it as HTTPValidationError, whose `detail` lists each field), or it is well-formed but not allowed here (for example: sandbox reset of a production tenant).' },
  status_unmapped: { status: 422, description: 'The canonical status has no mapping on this connection; `allowed` lists the vendor statuses that are mapped.' },
  agreement_header_not_supported: { status: 422, description: 'The service never creates an agreement header.' },
  project_header_not_supported: { status: 422, description: 'The service never creates a project header.' },
  agreement_requires_existing: { status: 404, description: 'The agreement is missing, unknown or not active.' },
  project_requires_existing: { status: 404, description: 'The project is missing or unknown.' },
  project_not_writable: { status: 409, description: 'A baseline project cannot take the write.' },
  project_company_cannot_update: { status: 409, description: 'A project\'s company cannot be changed.' },
  company_match_ambiguous: { status: 409, description: 'More than one company matches; nothing was created.' },
  distributor_required: { status: 409, description: 'The tenant has no connected distributor for this write.' },
  idempotency_conflict: { status: 409, description: 'The idempotency key was used before with a different request body.' },
  idempotency_in_progress: { status: 409, description: 'A request with this idempotency key is still being processed; retry later.' },
  method_not_allowed: { status: 405, description: 'The path exists but does not take this method (there is no contact create); `Allow` lists the methods it takes.' },
  bad_request: { status: 400, description: 'The HTTP request itself could not be read (malformed request line, headers or chunked encoding). Sent by the HTTP server before any route.' },
  expectation_failed: { status: 417, description: 'An `Expect` header other than `100-continue`: the server does not take it.' },
  request_timeout: { status: 408, description: 'The request\'s headers or body did not arrive within the server\'s time limit (`HTTP_HEADERS_TIMEOUT_MS`, `HTTP_REQUEST_TIMEOUT_MS`); the connection is closed. Sent by the HTTP server before any route.' },
  headers_too_large: { status: 431, description: 'The request headers are too large (over 16 KB together).' },
  payload_too_large: { status: 413, description: 'The request body is over 1 MB. Nothing was read or written.' },
  not_supported: { status: 501, description: 'The connector does not support this operation (limited PSA connector lists, non-fixture host, unavailable import).' },
  rate_limited: { status: 429, description: 'Vendor throttling outlived our retries, the connection\'s API budget (shared by every integration of the MSP) admits no call before the request answers, or this key went past its own limit (every answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`); nothing was written; wait for `Retry-After` seconds.' },
  vendor_error: { status: 502, description: 'The vendor definitely refused the request (its own error answer) in a way we could not map to a field. Nothing was written.' },
  vendor_unavailable: { status: 503, description: 'The vendor stayed unavailable after retries, or a write\'s outcome is not known yet (no answer, a gateway error: `details.outcome` is `unknown`) and it may still land. Retry with the same idempotency key after `Retry-After`: the retry waits until nothing sent before can still land, then finds the write by its marker or sends it once.' },
  service_unavailable: { status: 503, description: 'A dependency of the service (its database or its job queue) is unreachable right now. Nothing was lost: retry after `Retry-After` seconds; a commit retried with the same idempotency key lands once.' },
  internal: { status: 500, description: 'An unexpected error on our side. It is logged with the request id; nothing a client sends should cause it.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The request-schema failure body (HTTPValidationError) is not an Error envelope; documented here too. */
export const VALIDATION_ERROR_DOC =
  'Request-schema failures (wrong type, missing field, undeclared property, bad query parameter) answer 422 with HTTPValidationError: {"detail": [{"loc": [...], "msg": "...", "type": "..."}]}.';
