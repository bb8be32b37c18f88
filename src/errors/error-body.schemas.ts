/** The two error bodies of docs/architecture.md, Errors, as schemas for the OpenAPI document. */
import { z } from '../shared/request';

const json = z.record(z.string(), z.unknown());

export const ErrorBody = z.object({
  code: z.string().openapi({ description: 'Stable; branch on it.' }),
  message: z.string().openapi({ description: 'One English sentence.' }),
  doc_url: z.string(),
  detail: z.string().nullable().optional().openapi({ description: 'Additive alias of `message`.' }),
  details: json.nullable().optional(),
  needed: z.string().nullable().optional(),
  allowed: z.array(z.string()).nullable().optional(),
  status: z.number().int().optional(),
  request_id: z.string().nullable().optional().openapi({ description: 'Our addition: the request id (also the `X-Request-Id` header), which identifies the request in our logs.' }),
}).strict().openapi('Error');

export const HTTPValidationError = z.object({
  code: z.literal('request_invalid').openapi({ description: 'Our addition, as in the Error envelope (GraphQL and MCP answer the same failure with this code).' }),
  message: z.string().openapi({ description: 'Our addition: every problem in one line (`body.summary: Required; ...`).' }),
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }).strict()),
  request_id: z.string().nullable().optional().openapi({ description: 'Our addition: the request id, as in the Error envelope.' }),
}).strict().openapi('HTTPValidationError');


