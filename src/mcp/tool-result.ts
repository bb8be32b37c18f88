/**
 * How a tool answer looks on the MCP surface: a success carries the same JSON REST returns, both as
 * structured content and as a JSON text block (for clients that read only text); a ServiceError
 * becomes a tool error whose text is the REST Error envelope, so the codes are the same everywhere.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../errors/service-error';
import { errorBody } from '../errors/error-bodies';

export function toolSuccess(body: Record<string, unknown>): CallToolResult {
  return { structuredContent: body, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** The Error envelope REST sends, as a tool error; Retry-After has no header here, so it travels in the body. */
export function toolError(error: ServiceError, publicUrl: string): CallToolResult {
  const { code, message, extras } = error;
  const body = errorBody(publicUrl, code, message, extras);
  if (extras.retryAfterSeconds != null) body.retry_after_seconds = Math.max(0, Math.ceil(extras.retryAfterSeconds));
  // No structuredContent: it would have to match the tool's output schema, which describes successes.
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/** Anything that is not a ServiceError is our fault: the caller sees `internal`, the log keeps the cause. */
export const INTERNAL_ERROR = new ServiceError('internal', 'Something went wrong on our side; the request id identifies it in our logs.');
