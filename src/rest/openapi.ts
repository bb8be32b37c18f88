/** GET /openapi.json: OpenAPI 3.1, generated from the same operation declarations that serve requests. */
import { getRefId, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_CODES } from '../errors/error-codes';
import { grantText } from '../operations/grant-text';
import type { Operation } from '../operations/operation';
import { ErrorBody, HTTPValidationError } from '../errors/error-body.schemas';
import type { OperationExample } from './examples';

export const API_VERSION = '0.77.0';

type Content = { description: string; content?: Record<string, { schema: any }> };

export function buildOpenApi(operations: Operation[], publicUrl: string, examples: Record<string, OperationExample> = {}): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.register('Error', ErrorBody);
  registry.register('HTTPValidationError', HTTPValidationError);
  // Two boxes under Authorize, one header: an MSP-only operation sends the MSP key, an ISV one the ISV key.
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The ISV\'s API key (the sandbox\'s is printed at start: `sk_sandbox_…`).' });
  registry.registerComponent('securitySchemes', MSP_KEY, { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A tenant\'s MSP key, for the operations marked "MSP key only" (each sandbox tenant\'s is printed at start: `sk_msp_sandbox_…`).' });

  const narrowedBy: { path: string; method: string; status: number; name: string }[] = [];
  for (const op of operations) {
    if (!op.http) continue;
    const byStatus = new Map<number, { schemas: any[]; descriptions: string[] }>();
    for (const r of op.responses) {
      const entry = byStatus.get(r.status) ?? { schemas: [], descriptions: [] };
      if (!entry.schemas.includes(r.schema)) entry.schemas.push(r.schema);
      // The `fields=` answer is not one of the status's schemas: a client generated with default flags
      // would type every record as "whole or narrowed", every field optional, also when it never sends
      // `fields`. It is a component of its own, named by the response's x-fields-schema (added below).
      if (r.narrowed) {
        const name = getRefId(r.narrowed as never);
        if (name) { registry.register(name, r.narrowed as never); narrowedBy.push({ path: op.http.path, method: op.http.method, status: r.status, name }); }
      }
      entry.descriptions.push(r.description);
      byStatus.set(r.status, entry);
    }
    const responses: Record<string, Content> = {};
    for (const [status, e] of byStatus) {
      responses[String(status)] = status === 204
        ? { description: e.descriptions.join(' ') }
        : { description: e.descriptions.join(' '), content: { 'application/json': { schema: e.schemas.length === 1 ? e.schemas[0] : z.union(e.schemas as [any, any, ...any[]]) } } };
    }
    if (op.csv && responses['200']?.content) {
      responses['200'].content['text/csv'] = { schema: z.string().openapi({ description: op.csv.description }) };
    }
    responses['401'] = { description: 'unauthenticated', content: { 'application/json': { schema: ErrorBody } } };
    responses['404'] ??= { description: 'not_found: the tenant or record is not visible to this key.', content: { 'application/json': { schema: ErrorBody } } };
    responses['422'] = { description: 'Request-schema failure (HTTPValidationError) or a coded refusal (Error).', content: { 'application/json': { schema: HTTPValidationError.or(ErrorBody) } } };
    // Any request may carry a body (express reads JSON for every method): an oversize one is 413.
    responses['413'] = { description: 'payload_too_large: the body is over 1 MB.', content: { 'application/json': { schema: ErrorBody } } };
    // Our own per-key limit applies to every operation (docs/architecture.md, Errors).
    responses['429'] ??= { description: 'rate_limited: this key\'s own limit, or vendor throttling; wait `Retry-After` seconds.', content: { 'application/json': { schema: ErrorBody } } };
    for (const code of op.errors) {
      const status = String(ERROR_CODES[code].status);
      if (responses[status]) continue;
      responses[status] = { description: code, content: { 'application/json': { schema: ErrorBody } } };
    }
    // The database or Redis unreachable: 503 on any operation, with Retry-After (src/http/dependency-errors.ts).
    const unavailable = 'service_unavailable: the database or the job queue is unreachable; retry after `Retry-After` seconds.';
    if (responses['503']) responses['503'].description = `${responses['503'].description} ${unavailable}`;
    else responses['503'] = { description: unavailable, content: { 'application/json': { schema: ErrorBody } } };
    const grant = grantText(op.grant);
    const role = op.role === 'msp' ? `**MSP key only**: "Try it out" sends the \`${MSP_KEY}\` key of Authorize.` : op.role === 'isv' ? 'ISV key only.' : undefined;
    registry.registerPath({
      method: op.http.method,
      path: op.http.path,
      operationId: op.name,
      summary: op.summary,
      description: [op.description, grant, role, op.http.documented ? undefined : 'Addition of this service (not in the interface document).'].filter(Boolean).join(' ') || undefined,
      tags: [op.tag],
      security: securityOf(op.role),
      request: {
        params: op.path as any,
        query: op.query as any,
        // A body whose every field has a default may be left out (POST .../sync takes none).
        body: op.body ? { required: !op.body.safeParse({}).success, content: { 'application/json': { schema: op.body as any } } } : undefined,
      },
      responses,
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return withExamples(withFieldsSchemas(narrowedBy, requestDefaultsOptional(nullableRefs(generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Unified MSP Integration Service',
      version: API_VERSION,
      description: 'Canonical REST layer between ISVs and MSP systems (PSA, RMM, distributor). Errors: see /docs/errors.',
    },
    servers: [{ url: publicUrl }],
  })))) as unknown as Record<string, unknown>, examples);
}

/**
 * Each answer `fields=` narrows names the schema of its narrowed form (`x-fields-schema`, a $ref) and says
 * so in its description; the status's own schema stays the whole record.
 */
function withFieldsSchemas<T>(narrowedBy: { path: string; method: string; status: number; name: string }[], doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, { responses?: Record<string, Json> }>> }).paths ?? {};
  for (const n of narrowedBy) {
    const response = paths[n.path]?.[n.method]?.responses?.[String(n.status)];
    if (!response) continue;
    response['x-fields-schema'] = { $ref: `#/components/schemas/${n.name}` };
    response.description = `${String(response.description ?? '')} Its narrowed form is \`${n.name}\` (x-fields-schema).`.trim();
  }
  return doc;
}

type Json = Record<string, unknown>;

const MSP_KEY = 'MspKey';

/**
 * The keys an operation takes, as Authorize boxes. Swagger UI sends every authorized scheme of the list
 * into the one header, the last winning: a reader's list ends with the key its example uses (withExamples).
 */
function securityOf(role: Operation['role']): Record<string, string[]>[] {
  if (role === 'msp') return [{ [MSP_KEY]: [] }];
  if (role === 'isv') return [{ ApiKey: [] }];
  return [{ [MSP_KEY]: [] }, { ApiKey: [] }];
}

/** Every component a node names, transitively. */
function refsOf(node: unknown, schemas: Record<string, Json>, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const n of node) refsOf(n, schemas, out);
  else if (node && typeof node === 'object') {
    const ref = (node as Json).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (!out.has(name)) { out.add(name); refsOf(schemas[name], schemas, out); }
    }
    for (const v of Object.values(node as Json)) refsOf(v, schemas, out);
  }
  return out;
}

/**
 * A request field with a default (zod `.default()`) may be left out: it is never in `required`. Client
 * generators go further: openapi-typescript with its default flags makes every property that has a
 * `default` non-optional in a component schema, so a client would have to send `dry_run` on every
 * call. In the schemas only requests use, the default moves into the description ("Default: `true`.").
 */
function requestDefaultsOptional<T>(doc: T): T {
  const d = doc as { paths?: Record<string, Record<string, Json>>; components?: { schemas?: Record<string, Json> } };
  const schemas = d.components?.schemas ?? {};
  const requests = new Set<string>();
  const responses = new Set<string>();
  for (const methods of Object.values(d.paths ?? {})) {
    for (const op of Object.values(methods)) {
      refsOf([op.requestBody, op.parameters], schemas, requests);
      refsOf(op.responses, schemas, responses);
    }
  }
  const strip = (node: unknown): void => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    const n = node as Json;
    if ('default' in n) {
      const said = `Default: \`${JSON.stringify(n.default)}\`.`;
      const description = typeof n.description === 'string' ? n.description : '';
      if (n.default !== undefined && !description.includes(said)) n.description = description ? `${description} ${said}` : said;
      delete n.default;
    }
    // Only the places that hold schemas (a property may itself be named "default").
    for (const v of Object.values((n.properties ?? {}) as Json)) strip(v);
    for (const k of ['items', 'additionalProperties', 'not'] as const) strip(n[k]);
    for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) if (Array.isArray(n[k])) (n[k] as unknown[]).forEach(strip);
  };
  for (const name of requests) if (!responses.has(name)) strip(schemas[name]);
  return doc;
}

type Doc = { paths?: Record<string, Record<string, { operationId?: string; description?: string; parameters?: { in: string; name: string; example?: unknown; schema?: { example?: unknown } }[]; requestBody?: { content: Record<string, { example?: unknown }> }; [k: string]: unknown }>> };

/** A document built without examples, with them: a copy (the examples name ids that change as the sandbox does). */
export function openApiWithExamples(doc: Record<string, unknown>, examples: Record<string, OperationExample>): Record<string, unknown> {
  return withExamples(structuredClone(doc), examples);
}

/**
 * Each operation's example (src/rest/examples.ts) on its parameters and body, so "Try it out" starts
 * filled in; `x-example-key` says which sandbox key it needs, `x-example-needs` what must exist first.
 */
function withExamples(doc: Record<string, unknown>, examples: Record<string, OperationExample>): Record<string, unknown> {
  for (const methods of Object.values((doc as Doc).paths ?? {})) {
    for (const op of Object.values(methods)) {
      const ex = op.operationId ? examples[op.operationId] : undefined;
      if (!ex) continue;
      for (const p of op.parameters ?? []) {
        const value = p.in === 'path' ? ex.path?.[p.name] : p.in === 'query' ? ex.query?.[p.name] : undefined;
        if (value !== undefined) p.example = value;
        // "Try it out" fills a query parameter from its schema's example too: only the example's own are sent.
        else if (p.in === 'query' && p.schema) delete p.schema.example;
      }
      const json = op.requestBody?.content['application/json'];
      if (json && ex.body !== undefined) json.example = ex.body;
      op['x-example-key'] = ex.key ?? 'isv';
      const security = op.security as Record<string, string[]>[] | undefined;
      if (ex.key === 'msp' && security && security.length > 1) op.security = [...security.filter((s) => !(MSP_KEY in s)), ...security.filter((s) => MSP_KEY in s)];
      if (ex.refuses) {
        op['x-example-needs'] = `nothing makes it succeed: ${ex.refuses}`;
        op.description = `${op.description ? `${op.description}\n\n` : ''}**Example:** always refused, by design: ${ex.refuses}.`;
      } else if (ex.needs) {
        op['x-example-needs'] = ex.needs;
        // Shown on the operation in /docs, where "Try it out" is.
        op.description = `${op.description ? `${op.description}\n\n` : ''}**Example:** as it stands it is refused; it needs ${ex.needs}.`;
      }
      if (ex.key === 'msp') op.description = `${op.description ? `${op.description}\n\n` : ''}**Example:** try it with the tenant's MSP key.`;
      if (ex.status) op['x-example-status'] = ex.status;
    }
  }
  return doc;
}

/**
 * zod-to-openapi writes a nullable reference as allOf [$ref, {type: [object, null]}], which no null
 * satisfies (allOf needs both); the meaning is anyOf [$ref, null].
 */
function nullableRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(nullableRefs) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) out[k] = nullableRefs(v);
  const allOf = out.allOf as Record<string, unknown>[] | undefined;
  if (Array.isArray(allOf) && allOf.length === 2) {
    const ref = allOf.find((x) => typeof x.$ref === 'string' && Object.keys(x).length === 1);
    const other = allOf.find((x) => x !== ref);
    const types = other?.type;
    if (ref && other && Object.keys(other).length === 1 && Array.isArray(types) && types.includes('null')) {
      delete out.allOf;
      out.anyOf = [ref, { type: 'null' }];
    }
  }
  return out as T;
}
