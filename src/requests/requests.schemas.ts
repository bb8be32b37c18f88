/** The request log as the API answers it (docs/architecture.md, Request log). */
import { rfc3339 } from '../shared/dates';
import { listEnvelope, pageQuery } from '../shared/paging';
import { pathId, text, z } from '../shared/request';
import { REQUESTS_CURSOR } from './requests.store';

export const RequestLogEntry = z.object({
  id: z.string().openapi({ description: 'The request id: the `X-Request-Id` header of the answer and the `request_id` of its Error envelope.' }),
  at: z.string().openapi({ description: 'When the request arrived (RFC 3339).' }),
  method: z.string(),
  path: z.string().openapi({ description: 'The path as called, without the query.' }),
  route: z.string().nullable().openapi({ description: 'The operation\'s path template (`/tenants/{tenant_id}/tickets`); `/` for MCP, `/graphql` for the graph; null for a path that names no operation.' }),
  tenant_id: z.string().nullable().openapi({ description: 'The tenant the request named (its path, or the MCP tool\'s `tenant_id` argument), as given.' }),
  status: z.number().int().openapi({ description: 'The HTTP status answered.' }),
  duration_ms: z.number().int(),
  key_prefix: z.string().nullable().openapi({ description: 'The first characters of the key the request came with.' }),
  error_code: z.string().nullable().openapi({ description: 'The Error envelope\'s `code` (`request_invalid` for a request-schema failure); an MCP tool error\'s code; null for a success.' }),
  surface: z.enum(['rest', 'mcp', 'graphql']),
}).strict().openapi('RequestLogEntry');

const Header = z.object({ name: z.string(), value: z.string() }).strict().openapi('RequestLogHeader');

export const RequestLogDetail = RequestLogEntry.extend({
  query: z.string().nullable().openapi({ description: 'The query string, secret-named parameters redacted.' }),
  request_headers: z.array(Header).openapi({ description: '`Authorization`, `X-API-Key`, `Cookie` and every other secret header read `[redacted]`.' }),
  request_body: z.string().nullable().openapi({ description: 'The request body as JSON text, every secret redacted (vendor credentials, keys, tokens), cut at 64 KiB.' }),
  request_body_truncated: z.boolean(),
  response_headers: z.array(Header),
  response_body: z.string().nullable().openapi({ description: 'The answer\'s body as sent, every secret redacted (a webhook secret or link shown once included), cut at 64 KiB.' }),
  response_body_truncated: z.boolean(),
}).strict().openapi('RequestLogDetail');

export const RequestLogList = listEnvelope('RequestLogList', '/requests', RequestLogEntry);

export const RequestsQuery = pageQuery(REQUESTS_CURSOR, { updatedSince: false }, {
  status: z.string().regex(/^[1-5](\d\d|xx)$/, 'must be a status (422) or a class (4xx)').nullable().optional()
    .openapi({ description: 'Only answers of this status (`422`) or class (`4xx`, `5xx`).' }),
  route: text(300).min(1).nullable().optional().openapi({ description: 'Only requests to this path template, as `route` shows it (`/tenants/{tenant_id}/tickets`).' }),
  tenant_id: text(100).min(1).nullable().optional().openapi({ description: 'Only requests that named this tenant.' }),
  since: rfc3339.nullable().optional().openapi({ description: 'Only requests that arrived at or after this time (RFC 3339).' }),
});

export const RequestPath = z.object({ request_id: pathId('request_id', 'The request id (`X-Request-Id`, or `request_id` of an Error envelope).') }).strict();
