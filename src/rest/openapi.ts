/** GET /openapi.json: OpenAPI 3.1, generated from the same route declarations that serve requests. */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { ERROR_CODES } from '../errors/error-codes';
import type { RouteDef } from './route';
import { ErrorBody, HTTPValidationError } from './schemas';

export const API_VERSION = '0.77.0';

export function buildOpenApi(routes: RouteDef[], publicUrl: string): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.register('Error', ErrorBody);
  registry.register('HTTPValidationError', HTTPValidationError);
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });

  for (const r of routes) {
    const responses: Record<string, { description: string; content?: Record<string, { schema: any }> }> = {
      [String(r.response.status)]: { description: r.response.description, content: { 'application/json': { schema: r.response.schema } } },
      401: { description: 'unauthenticated', content: { 'application/json': { schema: ErrorBody } } },
      422: { description: 'Request-schema failure (HTTPValidationError) or a coded refusal (Error).', content: { 'application/json': { schema: HTTPValidationError.or(ErrorBody) } } },
    };
    for (const code of r.errors) {
      const status = String(ERROR_CODES[code].status);
      if (responses[status]) continue;
      responses[status] = { description: code, content: { 'application/json': { schema: ErrorBody } } };
    }
    registry.registerPath({
      method: r.method,
      path: r.path,
      operationId: r.operationId,
      summary: r.summary,
      description: [r.description, r.documented ? undefined : 'Addition of this service (not in the interface document).'].filter(Boolean).join(' ') || undefined,
      tags: [r.tag],
      security: [{ ApiKey: [] }],
      request: {
        params: r.params as any,
        query: r.query as any,
        body: r.body ? { required: true, content: { 'application/json': { schema: r.body as any } } } : undefined,
      },
      responses,
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Unified MSP Integration Service',
      version: API_VERSION,
      description: 'Canonical REST layer between ISVs and MSP systems (PSA, RMM, distributor). Errors: see /docs/errors.',
    },
    servers: [{ url: publicUrl }],
  }) as unknown as Record<string, unknown>;
}
