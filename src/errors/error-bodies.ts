/** The two error bodies of docs/architecture.md, Errors: the Error envelope and HTTPValidationError. */
import type { Response } from 'express';
import { ERROR_CODES, type ErrorCode } from './error-codes';
import type { RequestValidationError } from './request-validation-error';
import type { ServiceError } from './service-error';

export function docUrl(publicUrl: string, code: string): string {
  return `${publicUrl}/docs/errors#${code}`;
}

/** The Error envelope of docs/architecture.md, Errors (REST body, MCP tool error text). */
export function errorBody(publicUrl: string, code: ErrorCode, message: string, extras: ServiceError['extras'] = {}): Record<string, unknown> {
  return {
    code,
    message,
    doc_url: docUrl(publicUrl, code),
    detail: message,
    details: extras.details ?? null,
    needed: extras.needed ?? null,
    allowed: extras.allowed ?? null,
    status: ERROR_CODES[code].status,
  };
}

export function sendError(
  res: Response, publicUrl: string, code: ErrorCode, message: string, extras: ServiceError['extras'] = {},
): void {
  if (extras.retryAfterSeconds != null) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(extras.retryAfterSeconds))));
  if (extras.allow) res.setHeader('Allow', extras.allow.join(', '));
  res.status(ERROR_CODES[code].status).json({ ...errorBody(publicUrl, code, message, extras), request_id: requestIdOf(res) });
}

/**
 * HTTPValidationError: `detail` lists each field as the interface says; `code` and `message` are ours, as
 * in the Error envelope (and as GraphQL and MCP answer the same failure), so a client reads `error.code`
 * on any error body without telling the two apart first.
 */
export function sendValidationError(res: Response, err: RequestValidationError): void {
  res.status(422).json({ code: 'request_invalid' satisfies ErrorCode, message: err.message, detail: err.detail, request_id: requestIdOf(res) });
}

/** The id the request logger gave this request (null outside a logged request). */
function requestIdOf(res: Response): string | null {
  const id = (res.req as { id?: unknown } | undefined)?.id;
  return id == null ? null : String(id);
}
