/**
 * Where the guides explain each error code: the /docs/errors row a `doc_url` points at links here, so an
 * error body leads to what to do about it. Typed by the code list, so a new code must name its section.
 */
import type { ErrorCode } from '../errors/error-codes';

const ACCESS = '/docs/guides/errors#refusals-of-access';
const WRITE = '/docs/guides/errors#refusals-of-a-write';
const LIMITS = '/docs/guides/errors#limits-and-the-vendor';
const HTTP = '/docs/guides/errors#the-http-layer';

export const ERROR_GUIDES: Record<ErrorCode, string> = {
  unauthenticated: ACCESS, not_found: ACCESS, grant_missing: '/docs/guides/connect#grants', role_required: '/docs/guides/getting-started#keys',
  psa_company_create_refused: WRITE, validation: WRITE, request_invalid: WRITE, status_unmapped: WRITE,
  agreement_header_not_supported: WRITE, project_header_not_supported: WRITE, agreement_requires_existing: WRITE,
  project_requires_existing: WRITE, project_not_writable: WRITE, project_company_cannot_update: WRITE,
  company_match_ambiguous: WRITE, distributor_required: WRITE,
  idempotency_conflict: '/docs/guides/idempotency#replays', idempotency_in_progress: '/docs/guides/idempotency#replays',
  method_not_allowed: HTTP, bad_request: HTTP, expectation_failed: HTTP, request_timeout: HTTP, headers_too_large: HTTP, payload_too_large: HTTP,
  not_supported: LIMITS, rate_limited: LIMITS, vendor_error: LIMITS, vendor_unavailable: '/docs/guides/idempotency#an-unknown-outcome',
  service_unavailable: LIMITS, internal: '/docs/guides/errors#the-error-envelope',
};
